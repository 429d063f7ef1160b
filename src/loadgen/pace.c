// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The sender's schedule: see pace.h for the rules. */
#include <errno.h>
#include <math.h>
#include <time.h>
#include "pace.h"
#include "util.h"

typedef unsigned __int128 u128;

int pace__init(struct pace *p, double period_ns, uint64_t t0, bool catch_up)
{
	if (isnan(period_ns) || period_ns < 0 ||
	    (period_ns > 0 && (period_ns < PACE_MIN_PERIOD_NS ||
			       period_ns > PACE_MAX_PERIOD_NS)))
		return -ERANGE;
	/* whole and fraction apart: period_ns << 32 overflows a long long */
	double whole = floor(period_ns);
	u128 fp = ((u128)(uint64_t)whole << PACE_FP_SHIFT) +
		  (u128)llround((period_ns - whole) * 4294967296.0);

	*p = (struct pace){
		.period_fp = fp,
		.t0 = t0,
		.catch_up = catch_up,
		.spin_ns = PACE_SPIN_INIT_NS,
	};
	return 0;
}

/* t0 + k * period, rounded to the nearest ns (not truncated: a period of
 * 1000/3 ns puts slot 3 at 1000, not 999). */
uint64_t pace__slot_time(const struct pace *p, uint64_t k)
{
	u128 off = ((u128)k * p->period_fp + ((u128)1 << (PACE_FP_SHIFT - 1))) >> PACE_FP_SHIFT;

	return p->t0 + (uint64_t)off;
}

uint64_t pace__due(const struct pace *p)
{
	return p->period_fp ? pace__slot_time(p, p->k) : 0;
}

/*
 * The last slot due at `now` (now >= t0): the largest j with
 * round(j * P / 2^32) <= now - t0 =: D, i.e. j * P + 2^31 < (D + 1) * 2^32.
 * The loops only guard the arithmetic; they do not run.
 */
static uint64_t last_due(const struct pace *p, uint64_t now)
{
	u128 d1 = ((u128)(now - p->t0) + 1) << PACE_FP_SHIFT;
	uint64_t j = (uint64_t)((d1 - ((u128)1 << (PACE_FP_SHIFT - 1)) - 1) / p->period_fp);

	while (pace__slot_time(p, j + 1) <= now)
		j++;
	while (j && pace__slot_time(p, j) > now)
		j--;
	return j;
}

void pace__set_stall(struct pace *p, uint64_t ns)
{
	p->stall_ns = ns;
}

void pace__take(struct pace *p, uint64_t now, struct pace_slot *s)
{
	p->slots++;
	s->missed = 0;
	if (!p->period_fp) {
		s->sched = now;
		return;
	}
	s->sched = pace__slot_time(p, p->k);
	if (!p->catch_up && now >= pace__slot_time(p, p->k + 1) &&
	    now - s->sched >= p->stall_ns) {
		/* a stall: this slot goes now, the others due are skipped,
		 * and the grid restarts here so the next is a period away */
		s->missed = last_due(p, now) - p->k;
		p->missed += s->missed;
		p->reanchors++;
		p->t0 = now;
		p->k = 1;
		return;
	}
	p->k++;
}

uint64_t pace__sent(struct pace *p, const struct pace_slot *s, uint64_t t,
		    uint64_t n)
{
	if (p->period_fp && p->have_last) {
		/* gap < period / 2, compared in the period's fixed point;
		 * a clock that went backwards is a gap of 0 */
		u128 gap = t > p->last_sent ? (u128)(t - p->last_sent) : 0;

		if ((gap << (PACE_FP_SHIFT + 1)) < p->period_fp)
			p->burst_dgrams += n;
	}
	p->dgrams += n;
	p->last_sent = t;
	p->have_last = true;
	return t > s->sched ? t - s->sched : 0;
}

double pace__burst_share(const struct pace *p)
{
	return p->dgrams ? (double)p->burst_dgrams / p->dgrams : 0;
}

static uint64_t mono_now(void *ctx)
{
	return now_ns();
}

static void mono_sleep_until(void *ctx, uint64_t t)
{
	struct timespec ts = { .tv_sec = t / 1000000000ull, .tv_nsec = t % 1000000000ull };

	/* EINTR returns early, on purpose: the caller checks its stop flag */
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

const struct pace_clock pace_clock_monotonic = {
	.now = mono_now,
	.sleep_until = mono_sleep_until,
};

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

uint64_t pace__wait(struct pace *p, const struct pace_clock *c, uint64_t until,
		    const volatile sig_atomic_t *stop)
{
	uint64_t now = c->now(c->ctx);

	while (now < until && until - now > p->spin_ns && !(stop && *stop)) {
		uint64_t target = until - p->spin_ns;

		c->sleep_until(c->ctx, target);
		now = c->now(c->ctx);
		if (now < target)
			continue; /* woken early (a signal): nothing learnt */
		uint64_t over = now - target;

		if (over * 2 > p->spin_ns)
			p->spin_ns = over * 2 < PACE_SPIN_MAX_NS ? over * 2 : PACE_SPIN_MAX_NS;
		else if (p->spin_ns > PACE_SPIN_MIN_NS)
			/* slow decay: one late wake-up in a while should keep it up */
			p->spin_ns -= (p->spin_ns - PACE_SPIN_MIN_NS + 63) / 64;
		break; /* one sleep, then spin: a second one could oversleep */
	}
	while (now < until && !(stop && *stop)) {
		cpu_relax();
		now = c->now(c->ctx);
	}
	return now;
}
