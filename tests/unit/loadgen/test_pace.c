// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for src/loadgen/pace.c: the absolute schedule (exact slot times),
 * lateness, missed slots and re-anchoring after a stall, --catch-up, the
 * burst share, and the sleep-then-spin wait on a fake clock.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include "pace.h"

#define U64(x) ((uint64_t)(x))

/* Take the next slot at `now` and send its n datagrams at the same instant. */
static uint64_t step(struct pace *p, uint64_t now, uint64_t n, struct pace_slot *s)
{
	pace__take(p, now, s);
	return pace__sent(p, s, now, n);
}

static void test_init_range(void **state)
{
	struct pace p;

	assert_int_equal(pace__init(&p, 0, 0, false), 0);          /* unpaced */
	assert_int_equal(pace__init(&p, 100, 0, false), 0);
	assert_int_equal(pace__init(&p, 3600e9, 0, false), 0);
	assert_int_equal(pace__init(&p, 99.9, 0, false), -ERANGE);
	assert_int_equal(pace__init(&p, 1, 0, false), -ERANGE);
	assert_int_equal(pace__init(&p, 3600e9 + 1, 0, false), -ERANGE);
	assert_int_equal(pace__init(&p, -1000, 0, false), -ERANGE);
	assert_int_equal(pace__init(&p, NAN, 0, false), -ERANGE);
	assert_int_equal(pace__init(&p, INFINITY, 0, false), -ERANGE);
}

static void test_slot_times_exact(void **state)
{
	struct pace p;

	assert_int_equal(pace__init(&p, 1000, 5000, false), 0);
	assert_true(pace__due(&p) == 5000);
	assert_true(pace__slot_time(&p, 1) == 6000);
	assert_true(pace__slot_time(&p, 7) == 12000);
	/* no drift over 3e9 slots: exactly t0 + k * period */
	assert_true(pace__slot_time(&p, U64(3000000000)) == U64(3000000000000) + 5000);

	/* 1000/3 ns: rounded to the nearest ns, not truncated */
	assert_int_equal(pace__init(&p, 1000.0 / 3, 0, false), 0);
	assert_true(pace__slot_time(&p, 1) == 333);
	assert_true(pace__slot_time(&p, 2) == 667);
	assert_true(pace__slot_time(&p, 3) == 1000);
	assert_true(pace__slot_time(&p, 3000000) == 1000000000);

	/* 50 Mbit/s of 1472 B datagrams: 235.52 us */
	assert_int_equal(pace__init(&p, 235520, 1000, false), 0);
	assert_true(pace__slot_time(&p, 21230) == U64(21230) * 235520 + 1000);

	/* the longest period, many slots: 128-bit products */
	assert_int_equal(pace__init(&p, 3600e9, 0, false), 0);
	assert_true(pace__slot_time(&p, 1000000) == U64(3600000000000000000));
}

static void test_on_time(void **state)
{
	struct pace p;
	struct pace_slot s;

	assert_int_equal(pace__init(&p, 1000, 10000, false), 0);
	for (int k = 0; k < 100; k++) {
		uint64_t due = pace__due(&p);

		assert_true(due == U64(10000 + 1000 * k));
		assert_true(step(&p, due, 1, &s) == 0);
		assert_true(s.sched == due);
		assert_true(s.missed == 0);
	}
	assert_true(p.slots == 100 && p.missed == 0 && p.reanchors == 0);
	assert_true(p.dgrams == 100 && p.burst_dgrams == 0);
	assert_true(pace__burst_share(&p) == 0);
}

static void test_lateness_no_drift(void **state)
{
	struct pace p;
	struct pace_slot s;

	assert_int_equal(pace__init(&p, 1000, 0, false), 0);
	assert_true(step(&p, 0, 1, &s) == 0);
	/* slot 1 sent 700 ns late: late, but not a missed slot */
	assert_true(step(&p, 1700, 1, &s) == 700);
	assert_true(s.sched == 1000 && s.missed == 0);
	/* and the grid does not move: slot 2 is still due at 2000 */
	assert_true(pace__due(&p) == 2000);
	assert_true(step(&p, 2000, 1, &s) == 0);
	/* 300 ns after the late one: less than half a period, a burst */
	assert_true(p.burst_dgrams == 1);
	/* lateness counts to the hand-over, not to the take */
	pace__take(&p, 3000, &s);
	assert_true(pace__sent(&p, &s, 3250, 1) == 250);
	/* one ns short of a full period late is still not a miss */
	assert_true(step(&p, 4999, 1, &s) == 999);
	assert_true(s.missed == 0 && p.missed == 0 && p.reanchors == 0);
	assert_true(pace__due(&p) == 5000);
}

static void test_stall_skips_and_reanchors(void **state)
{
	struct pace p;
	struct pace_slot s;

	assert_int_equal(pace__init(&p, 1000, 0, false), 0);
	step(&p, 0, 1, &s);
	step(&p, 1000, 1, &s);
	/* slot 2 was due at 2000; the process ran again 10 periods later */
	uint64_t wake = 2000 + 10 * 1000 + 5;

	assert_true(pace__due(&p) == 2000);
	assert_true(step(&p, wake, 1, &s) == 10005);  /* the stall shows as lateness */
	assert_true(s.sched == 2000);
	assert_true(s.missed == 10);                  /* slots 3..12 */
	assert_true(p.missed == 10 && p.reanchors == 1);
	/* re-anchored: the next slot is a full period after the send */
	assert_true(pace__due(&p) == wake + 1000);
	assert_true(step(&p, wake + 1000, 1, &s) == 0);
	assert_true(s.missed == 0);
	assert_true(pace__due(&p) == wake + 2000);
	/* no burst anywhere: 1000, 11005, 1000 between sends */
	assert_true(p.burst_dgrams == 0 && p.dgrams == 4);
	assert_true(p.slots == 4);
}

static void test_stall_one_period_boundary(void **state)
{
	struct pace p;
	struct pace_slot s;

	/* woken exactly when the following slot is also due: one missed */
	assert_int_equal(pace__init(&p, 1000, 0, false), 0);
	step(&p, 0, 1, &s);
	step(&p, 2000, 1, &s);
	assert_true(s.sched == 1000 && s.missed == 1);
	assert_true(pace__due(&p) == 3000);
	/* one ns earlier: not missed, and the grid is kept */
	assert_int_equal(pace__init(&p, 1000, 0, false), 0);
	step(&p, 0, 1, &s);
	step(&p, 1999, 1, &s);
	assert_true(s.missed == 0 && p.reanchors == 0);
	assert_true(pace__due(&p) == 2000);
}

/*
 * Below the stall threshold a late sender makes up the slots in order:
 * nothing missed, the grid unchanged; beyond it, the stall rule.
 */
static void test_hiccup_made_up(void **state)
{
	struct pace p;
	struct pace_slot s;

	assert_int_equal(pace__init(&p, 1000, 0, false), 0);
	pace__set_stall(&p, 5000);
	pace__take(&p, 0, &s);
	/* 4.5 periods late for slot 1: slots 1..5 go at once, none missed */
	for (uint64_t k = 1; k <= 5; k++) {
		pace__take(&p, 4500, &s);
		assert_int_equal(s.sched, k * 1000);
		assert_int_equal(s.missed, 0);
	}
	assert_int_equal(pace__due(&p), 6000);
	assert_int_equal(p.reanchors, 0);
	/* 6 periods late: a stall, skipped and re-anchored */
	pace__take(&p, 12000, &s);
	assert_int_equal(s.sched, 6000);
	assert_int_equal(s.missed, 6);
	assert_int_equal(p.reanchors, 1);
	assert_int_equal(pace__due(&p), 13000);
}

static void test_stall_catch_up(void **state)
{
	struct pace p;
	struct pace_slot s;
	uint64_t wake = 2000 + 10 * 1000 + 5;

	assert_int_equal(pace__init(&p, 1000, 0, true), 0);
	step(&p, 0, 1, &s);
	step(&p, 1000, 1, &s);
	/* every slot due at the wake-up goes, back to back, none missed */
	for (uint64_t k = 2; k <= 12; k++) {
		assert_true(pace__due(&p) == k * 1000);
		assert_true(pace__due(&p) <= wake);
		assert_true(step(&p, wake, 1, &s) == wake - k * 1000);
		assert_true(s.sched == k * 1000 && s.missed == 0);
	}
	/* the grid was kept: slot 13 at 13000 */
	assert_true(pace__due(&p) == 13000);
	assert_true(step(&p, 13000, 1, &s) == 0);
	assert_true(p.missed == 0 && p.reanchors == 0);
	/* the burst: slots 3..12 went 0 ns after the previous one */
	assert_true(p.burst_dgrams == 10 && p.dgrams == 14);
	assert_true(fabs(pace__burst_share(&p) - 10.0 / 14) < 1e-12);
}

static void test_burst_share(void **state)
{
	struct pace p;
	struct pace_slot s;

	/* --burst 8 on time: the batch is intended, never a burst */
	assert_int_equal(pace__init(&p, 1000, 0, false), 0);
	for (int k = 0; k < 10; k++)
		step(&p, pace__due(&p), 8, &s);
	assert_true(p.dgrams == 80 && p.burst_dgrams == 0);
	/* a slot sent 600 late, the next on time 400 after it: all 8 in a burst */
	step(&p, 10600, 8, &s);
	step(&p, 11000, 8, &s);
	assert_true(p.burst_dgrams == 8);
	/* exactly half a period is not less than half a period */
	step(&p, 12500, 8, &s);
	step(&p, 13000, 8, &s);
	assert_true(p.burst_dgrams == 8);
	/* half a period minus 1 ns is */
	step(&p, 14501, 8, &s);
	step(&p, 15000, 8, &s);
	assert_true(p.burst_dgrams == 16 && p.dgrams == 128);
	assert_true(pace__burst_share(&p) == 16.0 / 128);

	/* an odd period: half of 1001 ns is 500.5, so a 500 ns gap is a burst */
	assert_int_equal(pace__init(&p, 1001, 0, false), 0);
	step(&p, 0, 1, &s);
	pace__take(&p, 1001, &s);
	pace__sent(&p, &s, 1501, 1);
	pace__take(&p, 2002, &s);
	pace__sent(&p, &s, 2001, 1);        /* 500 after */
	assert_true(p.burst_dgrams == 1);
	pace__take(&p, 3003, &s);
	pace__sent(&p, &s, 2502, 1);        /* 501 after: not a burst */
	assert_true(p.burst_dgrams == 1);
	/* a clock that went backwards counts as a gap of 0 */
	pace__take(&p, 4004, &s);
	pace__sent(&p, &s, 2000, 1);
	assert_true(p.burst_dgrams == 2);
}

static void test_unpaced(void **state)
{
	struct pace p;
	struct pace_slot s;

	assert_int_equal(pace__init(&p, 0, 777, false), 0);
	assert_true(pace__due(&p) == 0);
	for (uint64_t t = 1000; t < 1010; t++) {
		assert_true(step(&p, t, 4, &s) == 0);
		assert_true(s.sched == t && s.missed == 0);
	}
	/* back to back, yet no period to be a burst against */
	assert_true(p.dgrams == 40 && p.burst_dgrams == 0 && p.missed == 0);
}

/* The missed count after any stall: brute force against the slot times. */
static void test_missed_brute_force(void **state)
{
	static const double periods[] = { 100, 333.3333, 1000.0 / 3, 1001, 235520,
					  12345.678, 1e6 / 7, 3600e9 };

	srand(1);
	for (size_t i = 0; i < sizeof(periods) / sizeof(periods[0]); i++) {
		for (int trial = 0; trial < 2000; trial++) {
			struct pace p, q;
			struct pace_slot s;
			uint64_t t0 = (uint64_t)rand() * 1000;
			uint64_t k0 = rand() % 100000;

			assert_int_equal(pace__init(&p, periods[i], t0, false), 0);
			p.k = k0;
			q = p;
			uint64_t due = pace__slot_time(&p, k0);
			/* up to ~50 periods late, at any phase */
			uint64_t late = (uint64_t)((double)rand() / RAND_MAX * 50 * periods[i]);
			uint64_t now = due + late, last = k0;

			while (pace__slot_time(&q, last + 1) <= now)
				last++;
			pace__take(&p, now, &s);
			assert_true(s.sched == due);
			if (s.missed != last - k0)
				fail_msg("period %.4f, k %llu, %llu ns late: missed %llu, want %llu",
					 periods[i], (unsigned long long)k0,
					 (unsigned long long)late,
					 (unsigned long long)s.missed,
					 (unsigned long long)(last - k0));
			if (last > k0)
				assert_true(pace__due(&p) == now + pace__slot_time(&q, 1) - t0);
			else
				assert_true(pace__due(&p) == pace__slot_time(&q, k0 + 1));
		}
	}
}

/* ---- the wait, on a fake clock ---- */

struct fake_clock {
	uint64_t t;
	uint64_t spin_step;     /* each read of the clock costs this */
	uint64_t oversleep;     /* each sleep wakes this late */
	uint64_t early;         /* the next sleep is cut short this much (a signal) */
	int sleeps, reads;
	uint64_t last_target;
	volatile sig_atomic_t *stop_on_sleep;
};

static uint64_t fake_now(void *ctx)
{
	struct fake_clock *c = ctx;

	c->reads++;
	c->t += c->spin_step;
	return c->t;
}

static void fake_sleep_until(void *ctx, uint64_t t)
{
	struct fake_clock *c = ctx;

	c->sleeps++;
	c->last_target = t;
	if (c->stop_on_sleep) {
		*c->stop_on_sleep = 1;
		c->t += 10;
		return;
	}
	if (c->early) {
		c->t = t - c->early;
		c->early = 0;
		return;
	}
	if (t > c->t)
		c->t = t;
	c->t += c->oversleep;
}

static void test_wait_sleeps_then_spins(void **state)
{
	struct fake_clock fc = { .spin_step = 100 };
	struct pace_clock c = { fake_now, fake_sleep_until, &fc };
	struct pace p;
	uint64_t got;

	assert_int_equal(pace__init(&p, 1e6, 0, false), 0);
	assert_true(p.spin_ns == PACE_SPIN_INIT_NS);
	got = pace__wait(&p, &c, 1000000, NULL);
	/* one sleep to 50 us before, then spinning to the slot */
	assert_int_equal(fc.sleeps, 1);
	assert_true(fc.last_target == 1000000 - PACE_SPIN_INIT_NS);
	assert_true(got >= 1000000 && got < 1000000 + fc.spin_step + 1);
	assert_true(fc.reads > 400); /* 50 us of 100 ns reads */
	/* woke on time: the margin decays, but not below its floor */
	assert_true(p.spin_ns < PACE_SPIN_INIT_NS);
	for (int i = 0; i < 2000; i++)
		pace__wait(&p, &c, fc.t + 2000000, NULL);
	assert_true(p.spin_ns == PACE_SPIN_MIN_NS);

	/* already past: no sleep, no spin */
	fc.sleeps = 0;
	got = pace__wait(&p, &c, 10, NULL);
	assert_int_equal(fc.sleeps, 0);
	assert_true(got > 10);
	/* closer than the margin: spin only */
	fc.sleeps = 0;
	got = pace__wait(&p, &c, fc.t + PACE_SPIN_MIN_NS / 2, NULL);
	assert_int_equal(fc.sleeps, 0);
}

static void test_wait_learns_oversleep(void **state)
{
	struct fake_clock fc = { .spin_step = 100, .oversleep = 70000 };
	struct pace_clock c = { fake_now, fake_sleep_until, &fc };
	struct pace p;
	uint64_t got;

	assert_int_equal(pace__init(&p, 1e6, 0, false), 0);
	/* 70 us late on a 50 us margin: this slot is ~20 us late... */
	got = pace__wait(&p, &c, 1000000, NULL);
	assert_true(got >= 1020000 && got < 1021000);
	/* ...and the margin is now twice the oversleep */
	assert_true(p.spin_ns >= 140000 && p.spin_ns <= 140000 + 2 * fc.spin_step);
	/* so the next wake-up comes before the slot: on time */
	got = pace__wait(&p, &c, 3000000, NULL);
	assert_true(got >= 3000000 && got <= 3000000 + fc.spin_step);
	/* a huge oversleep is capped */
	fc.oversleep = 5000000;
	pace__wait(&p, &c, fc.t + 10000000, NULL);
	assert_true(p.spin_ns == PACE_SPIN_MAX_NS);
}

static void test_wait_signal(void **state)
{
	struct fake_clock fc = { .spin_step = 100, .early = 300000 };
	struct pace_clock c = { fake_now, fake_sleep_until, &fc };
	volatile sig_atomic_t stop = 0;
	struct pace p;
	uint64_t got;

	assert_int_equal(pace__init(&p, 1e6, 0, false), 0);
	/* woken early without a stop: sleeps again, learns nothing */
	got = pace__wait(&p, &c, 1000000, &stop);
	assert_int_equal(fc.sleeps, 2);
	assert_true(got >= 1000000);
	assert_true(p.spin_ns <= PACE_SPIN_INIT_NS);
	/* a stop during the sleep returns at once, before the slot */
	fc.stop_on_sleep = &stop;
	got = pace__wait(&p, &c, fc.t + 1000000, &stop);
	assert_true(stop);
	assert_true(got < fc.last_target);
}

/* The whole loop on the fake clock: no drift over many fractional slots. */
static void test_loop_no_drift(void **state)
{
	struct fake_clock fc = { .spin_step = 37, .oversleep = 12000 };
	struct pace_clock c = { fake_now, fake_sleep_until, &fc };
	struct pace p;
	struct pace_slot s;
	const double period = 235520.0 / 3; /* 78506.67 ns */
	uint64_t max_late = 0;

	assert_int_equal(pace__init(&p, period, 1000, false), 0);
	for (int k = 0; k < 100000; k++) {
		uint64_t now = pace__wait(&p, &c, pace__due(&p), NULL);
		uint64_t late;

		pace__take(&p, now, &s);
		late = pace__sent(&p, &s, now, 1);
		if (late > max_late)
			max_late = late;
		/* on the ideal grid to the ns, slot 99999 as much as slot 0 */
		assert_true(fabs((double)s.sched - (1000 + k * period)) <= 1.0);
	}
	assert_true(p.missed == 0 && p.burst_dgrams == 0);
	/* spinning ends within a clock read of the slot */
	assert_true(max_late <= fc.spin_step);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_range),
		cmocka_unit_test(test_slot_times_exact),
		cmocka_unit_test(test_on_time),
		cmocka_unit_test(test_lateness_no_drift),
		cmocka_unit_test(test_stall_skips_and_reanchors),
		cmocka_unit_test(test_stall_one_period_boundary),
		cmocka_unit_test(test_hiccup_made_up),
		cmocka_unit_test(test_stall_catch_up),
		cmocka_unit_test(test_burst_share),
		cmocka_unit_test(test_unpaced),
		cmocka_unit_test(test_missed_brute_force),
		cmocka_unit_test(test_wait_sleeps_then_spins),
		cmocka_unit_test(test_wait_learns_oversleep),
		cmocka_unit_test(test_wait_signal),
		cmocka_unit_test(test_loop_no_drift),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
