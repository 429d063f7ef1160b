// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for src/kernel/proc.c: the process tree (fake /proc trees, with and
 * without children files, and real forks), running a command (exit codes
 * as a shell gives them, exec failures, signals, process group), and the
 * user it runs as under sudo (as root: really switched to it).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include "proc.h"

static char fake[64];

/* --- fake /proc trees --- */

static void put(const char *rel, const char *text)
{
	char p[256], *slash;
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", fake, rel);
	/* mkdir -p of its directory */
	for (slash = strchr(p + strlen(fake) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdir(p, 0755) && errno != EEXIST)
			fail_msg("mkdir %s: %s", p, strerror(errno));
		*slash = '/';
	}
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int fake_setup(void **state)
{
	(void)state;
	snprintf(fake, sizeof(fake), "/tmp/test_proc.XXXXXX");
	return mkdtemp(fake) ? 0 : -1;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static int fake_teardown(void **state)
{
	(void)state;
	return nftw(fake, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* n pids, sorted, as "1 2 3" */
static const char *sorted(int *pids, int n)
{
	static char buf[256];
	int len = 0;

	qsort(pids, n, sizeof(*pids), cmp_int);
	buf[0] = '\0';
	for (int i = 0; i < n; i++)
		len += snprintf(buf + len, sizeof(buf) - len, "%s%d", i ? " " : "", pids[i]);
	return buf;
}

/*
 * Children files: one per thread (a child may belong to any thread of its
 * parent), a process gone between its parent's listing and ours, a child
 * named twice, and an unrelated tree.
 */
static void test_fake_children(void **state)
{
	int pids[16], n;

	(void)state;
	put("100/task/100/children", "101 102 ");
	put("100/task/105/children", "103\n");
	put("101/task/101/children", "104 ");
	put("102/task/102/children", "");
	put("104/task/104/children", "101 106 "); /* 106 has gone */
	put("200/task/200/children", "201 ");
	put("201/task/201/children", "");

	n = proc__descendants_at(fake, 100, pids, 16);
	assert_int_equal(pids[0], 100); /* root first */
	assert_int_equal(n, 6);
	assert_string_equal(sorted(pids, n), "100 101 102 103 104 106");

	n = proc__descendants_at(fake, 101, pids, 16);
	assert_string_equal(sorted(pids, n), "101 104 106");
	n = proc__descendants_at(fake, 102, pids, 16);
	assert_string_equal(sorted(pids, n), "102");

	/* at most max, root first */
	n = proc__descendants_at(fake, 100, pids, 2);
	assert_int_equal(n, 2);
	assert_int_equal(pids[0], 100);

	assert_int_equal(proc__descendants_at(fake, 999, pids, 16), -ESRCH);
	assert_int_equal(proc__descendants_at(fake, 0, pids, 16), -ESRCH);
	assert_int_equal(proc__descendants_at(fake, -1, pids, 16), -ESRCH);
}

/* No children files (no CONFIG_PROC_CHILDREN): the ppid of every stat. */
static void test_fake_stat(void **state)
{
	int pids[16], n;

	(void)state;
	put("1/stat", "1 (init) S 0 1 1 0 -1\n");
	put("100/stat", "100 (sh) S 1 100 100 0 -1\n");
	/* a comm may hold spaces and ')': the fields start after the last one */
	put("101/stat", "101 (a) S 7 b) R 100 100 100 0 -1\n");
	put("102/stat", "102 (x (y) S 101 100 100 0 -1\n");
	put("103/stat", "103 () S 100 100 100 0 -1\n");
	put("104/stat", "104 (z) Z 103 100 100 0 -1\n");
	put("200/stat", "200 (other) S 1 200 200 0 -1\n");
	put("201/stat", "201 (child) S 200 200 200 0 -1\n");
	put("300/stat", "garbage");
	put("301/stat", "");
	put("self/stat", "100 (sh) S 1 100 100 0 -1\n"); /* not a pid */

	n = proc__descendants_at(fake, 100, pids, 16);
	assert_int_equal(pids[0], 100);
	assert_string_equal(sorted(pids, n), "100 101 102 103 104");
	n = proc__descendants_at(fake, 103, pids, 16);
	assert_string_equal(sorted(pids, n), "103 104");
	n = proc__descendants_at(fake, 200, pids, 16);
	assert_string_equal(sorted(pids, n), "200 201");
	n = proc__descendants_at(fake, 100, pids, 3);
	assert_int_equal(n, 3);
	assert_int_equal(pids[0], 100);
	assert_int_equal(proc__descendants_at(fake, 999, pids, 16), -ESRCH);
}

/* --- real processes --- */

/*
 * A child that forks a grandchild; both wait until `release` reads EOF
 * (the test closes its end, or dies). *grandchild: the grandchild's pid.
 */
static pid_t fork_tree(int *release, pid_t *grandchild)
{
	int rel[2], tell[2];
	pid_t a;

	assert_int_equal(pipe2(rel, O_CLOEXEC), 0);
	assert_int_equal(pipe2(tell, O_CLOEXEC), 0);
	a = fork();
	assert_true(a >= 0);
	if (a == 0) {
		char c;
		pid_t b;

		close(rel[1]);
		close(tell[0]);
		b = fork();
		if (b < 0)
			_exit(1);
		if (b == 0) {
			while (read(rel[0], &c, 1) > 0)
				;
			_exit(0);
		}
		if (write(tell[1], &b, sizeof(b)) != sizeof(b))
			_exit(1);
		close(tell[1]);
		while (waitpid(b, NULL, 0) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(rel[0]);
	close(tell[1]);
	assert_int_equal(read(tell[0], grandchild, sizeof(*grandchild)), sizeof(*grandchild));
	close(tell[0]);
	*release = rel[1];
	return a;
}

static bool has(const int *pids, int n, int pid)
{
	for (int i = 0; i < n; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

static void test_real_tree(void **state)
{
	int pids[4096], n, release, code;
	pid_t a, b;

	(void)state;
	a = fork_tree(&release, &b);
	n = proc__descendants(a, pids, 4096);
	assert_int_equal(n, 2);
	assert_int_equal(pids[0], a);
	assert_int_equal(pids[1], b);

	/* from this process: itself, the child and the grandchild */
	n = proc__descendants(getpid(), pids, 4096);
	assert_true(n >= 3);
	assert_int_equal(pids[0], getpid());
	assert_true(has(pids, n, a));
	assert_true(has(pids, n, b));

	n = proc__descendants(b, pids, 4096);
	assert_int_equal(n, 1);
	assert_int_equal(pids[0], b);

	close(release);
	assert_int_equal(proc__wait(a, false, &code), 1);
	assert_int_equal(code, 0);
	assert_int_equal(proc__descendants(a, pids, 4096), -ESRCH);
}

static void test_check(void **state)
{
	pid_t pid;
	int status;

	(void)state;
	assert_int_equal(proc__check(getpid()), 0);
	assert_int_equal(proc__check(0), -ESRCH);
	assert_int_equal(proc__check(-1), -ESRCH);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(proc__check(pid), -ESRCH);
	if (geteuid() != 0)
		return;
	/* not ours: as nobody, init is there but not ours to signal */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(2);
		_exit(proc__check(1) == -EPERM ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* Run argv as udpdrop does, to its end: its exit code. */
static int run(const struct proc_user *as, char *const argv[])
{
	enum proc_stage stage;
	pid_t pid;
	int code;

	assert_int_equal(proc__spawn(argv, as, &pid, &stage), 0);
	assert_int_equal(stage, PROC_STAGE_NONE);
	assert_true(pid > 0);
	assert_int_equal(proc__wait(pid, false, &code), 1);
	assert_int_equal(proc__wait(pid, false, &code), -ECHILD);
	return code;
}

static int sh(const char *script)
{
	char *argv[] = { "sh", "-c", (char *)script, NULL };

	return run(NULL, argv);
}

static void test_exit_codes(void **state)
{
	(void)state;
	assert_int_equal(sh("exit 0"), 0);
	assert_int_equal(sh("exit 3"), 3);
	assert_int_equal(sh("exit 255"), 255);
	assert_int_equal(sh("kill -TERM $$"), 128 + SIGTERM);
	assert_int_equal(sh("kill -KILL $$"), 128 + SIGKILL);
	/* argv passed as is */
	char *argv[] = { "sh", "-c", "test \"$1\" = 'a b' && test $# = 2", "sh", "a b", "c", NULL };

	assert_int_equal(run(NULL, argv), 0);
}

static void test_exec_fails(void **state)
{
	char *missing[] = { "udpdrop-test-no-such-command", NULL };
	char *missing_path[] = { "/nonexistent/udpdrop-test", NULL };
	char *dir[] = { "/", NULL };
	char file[] = "/tmp/test_proc_noexec.XXXXXX";
	char *noexec[] = { file, NULL };
	enum proc_stage stage;
	pid_t pid = -1;
	int fd;

	(void)state;
	assert_int_equal(proc__spawn(missing, NULL, &pid, &stage), -ENOENT);
	assert_int_equal(stage, PROC_STAGE_EXEC);
	assert_int_equal(pid, 0);
	assert_int_equal(proc__exec_code(ENOENT), 127);
	assert_int_equal(proc__spawn(missing_path, NULL, &pid, &stage), -ENOENT);
	assert_int_equal(stage, PROC_STAGE_EXEC);

	assert_int_equal(proc__spawn(dir, NULL, &pid, &stage), -EACCES);
	assert_int_equal(stage, PROC_STAGE_EXEC);
	assert_int_equal(proc__exec_code(EACCES), 126);

	fd = mkstemp(file);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "#!/bin/sh\n", 10), 10);
	close(fd);
	assert_int_equal(chmod(file, 0644), 0); /* no x bit: even root may not */
	assert_int_equal(proc__spawn(noexec, NULL, &pid, &stage), -EACCES);
	assert_int_equal(stage, PROC_STAGE_EXEC);
	unlink(file);

	/* nothing to run */
	char *empty[] = { NULL };

	assert_int_equal(proc__spawn(empty, NULL, &pid, &stage), -EINVAL);
	assert_int_equal(stage, PROC_STAGE_SPAWN);
	/* every child reaped: none left */
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
}

/* Handlers, ignored signals and blocked ones are not the command's. */
static void on_usr(int sig)
{
	(void)sig;
}

static void test_signals_reset(void **state)
{
	struct sigaction sa = { .sa_handler = on_usr }, old1, old2;
	sigset_t block, oldmask;

	(void)state;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, &old1);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGUSR2, &sa, &old2);
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, &oldmask);

	assert_int_equal(sh("kill -USR1 $$; exit 0"), 128 + SIGUSR1);
	assert_int_equal(sh("kill -USR2 $$; exit 0"), 128 + SIGUSR2); /* not ignored */
	assert_int_equal(sh("kill -TERM $$; exit 0"), 128 + SIGTERM); /* not blocked */
	/* not a blocked mask either (sh -c does not touch it) */
	assert_int_equal(sh("grep -q '^SigBlk:[[:space:]]*0*$' /proc/self/status"), 0);

	sigprocmask(SIG_SETMASK, &oldmask, NULL);
	sigaction(SIGUSR1, &old1, NULL);
	sigaction(SIGUSR2, &old2, NULL);
}

/*
 * Prepared: forked, in our process group (Ctrl-C reaches it), not yet
 * run; started, it runs the command; aborted, it is gone and reaped.
 */
static void test_prepare_start_abort(void **state)
{
	char *argv[] = { "sh", "-c", "exit 7", NULL };
	struct proc_child c;
	enum proc_stage stage;
	char p[64], comm[32] = "";
	int pids[4096], n, code;
	FILE *f;

	(void)state;
	assert_int_equal(proc__prepare(&c, argv, NULL), 0);
	assert_true(c.pid > 0);
	assert_int_equal(getpgid(c.pid), getpgrp());
	assert_int_equal(getsid(c.pid), getsid(0));
	n = proc__descendants(getpid(), pids, 4096);
	assert_true(has(pids, n, c.pid));
	/* still this program, waiting */
	snprintf(p, sizeof(p), "/proc/%d/comm", c.pid);
	f = fopen(p, "r");
	assert_non_null(f);
	assert_non_null(fgets(comm, sizeof(comm), f));
	fclose(f);
	assert_string_not_equal(comm, "sh\n");
	assert_int_equal(proc__wait(c.pid, true, &code), 0);
	assert_int_equal(proc__start(&c, &stage), 0);
	assert_int_equal(stage, PROC_STAGE_NONE);
	assert_int_equal(proc__wait(c.pid, false, &code), 1);
	assert_int_equal(code, 7);

	assert_int_equal(proc__prepare(&c, argv, NULL), 0);
	pid_t pid = c.pid;

	proc__abort(&c);
	assert_int_equal(c.pid, 0);
	assert_int_equal(proc__wait(pid, true, &code), -ECHILD);
	assert_int_equal(proc__check(pid), -ESRCH);

	/* killed before it ran (Ctrl-C meanwhile): no SIGPIPE for us, its end as is */
	assert_int_equal(proc__prepare(&c, argv, NULL), 0);
	assert_int_equal(kill(c.pid, SIGKILL), 0);
	assert_int_equal(proc__start(&c, &stage), 0);
	assert_int_equal(proc__wait(c.pid, false, &code), 1);
	assert_int_equal(code, 128 + SIGKILL);
}

/* Ended, or a zombie its new parent has not reaped yet. */
static bool ended(pid_t pid)
{
	char p[64], st[512];
	FILE *f;
	char *rp;
	bool gone;

	snprintf(p, sizeof(p), "/proc/%d/stat", pid);
	f = fopen(p, "r");
	if (!f)
		return true;
	gone = !fgets(st, sizeof(st), f) || !(rp = strrchr(st, ')')) || rp[2] == 'Z' || rp[2] == 'X';
	fclose(f);
	return gone;
}

/*
 * The command lives no longer than udpdrop: a process that started one
 * and died (here: exits at once, as if killed) takes it along, by the
 * death signal set in the child.
 */
static void test_death_signal(void **state)
{
	char *argv[] = { "sleep", "30", NULL };
	int fds[2], status;
	pid_t mid, cmd = 0;

	(void)state;
	assert_true(proc__death_signal() == SIGTERM || proc__death_signal() == SIGKILL);
	assert_int_equal(pipe(fds), 0);
	mid = fork();
	assert_true(mid >= 0);
	if (mid == 0) {
		enum proc_stage stage;
		pid_t pid = 0;

		close(fds[0]);
		if (proc__spawn(argv, NULL, &pid, &stage))
			_exit(1);
		if (write(fds[1], &pid, sizeof(pid)) != sizeof(pid))
			_exit(1);
		_exit(0); /* udpdrop gone, its command running */
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], &cmd, sizeof(cmd)), sizeof(cmd));
	close(fds[0]);
	assert_int_equal(waitpid(mid, &status, 0), mid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(cmd > 0);
	for (int i = 0; i < 500 && !ended(cmd); i++)
		usleep(10000);
	if (!ended(cmd)) {
		kill(cmd, SIGKILL);
		fail_msg("the command (pid %d) outlived the process that started it", cmd);
	}
}

static volatile sig_atomic_t alarms;
static volatile pid_t sleeper;

/* the third alarm ends the command: the wait was interrupted twice before */
static void on_alarm(int sig)
{
	(void)sig;
	if (++alarms == 3)
		kill(sleeper, SIGTERM);
}

/* nohang while it runs; signal handlers do not cut a blocking wait short */
static void test_wait(void **state)
{
	char *argv[] = { "sleep", "30", NULL };
	struct sigaction sa = { .sa_handler = on_alarm }, old; /* no SA_RESTART */
	struct itimerval it = { .it_interval = { 0, 20000 }, .it_value = { 0, 20000 } };
	struct itimerval off = {};
	enum proc_stage stage;
	pid_t pid;
	int code = -1;

	(void)state;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, &old);
	assert_int_equal(proc__spawn(argv, NULL, &pid, &stage), 0);
	assert_int_equal(proc__wait(pid, true, &code), 0);
	assert_int_equal(code, -1);
	alarms = 0;
	sleeper = pid;
	setitimer(ITIMER_REAL, &it, NULL);
	assert_int_equal(proc__wait(pid, false, &code), 1);
	setitimer(ITIMER_REAL, &off, NULL);
	sigaction(SIGALRM, &old, NULL);
	assert_int_equal(code, 128 + SIGTERM);
	assert_true(alarms >= 3);
	assert_int_equal(proc__wait(0, false, &code), -ECHILD);
	assert_int_equal(proc__wait(-1, true, &code), -ECHILD);
}

/* SUDO_UID / SUDO_GID: digits, in range, both; 0 changes nothing. */
static void test_user_parse(void **state)
{
	static const char *const bad[][2] = {
		{ "abc", "1" }, { "1", "abc" }, { "-1", "1" }, { "+5", "5" },
		{ " 5", "5" }, { "5 ", "5" }, { "", "5" }, { "0x10", "5" },
		{ "4294967295", "1" }, { "1", "4294967295" }, { "99999999999", "1" },
		{ "1000", NULL }, { NULL, "1000" },
	};
	struct proc_user u;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(proc__user_from(&u, bad[i][0], bad[i][1]), -EINVAL);
		assert_false(u.set);
		proc__user_free(&u);
	}
	assert_int_equal(proc__user_from(&u, NULL, NULL), 0);
	assert_false(u.set);
	assert_int_equal(proc__user_from(&u, "0", "0"), 0);
	assert_false(u.set);

	/* no passwd entry: its gid, alone */
	assert_int_equal(proc__user_from(&u, "4294967294", "4000000000"), 0);
	assert_true(u.set);
	assert_int_equal(u.uid, 4294967294u);
	assert_int_equal(u.gid, 4000000000u);
	assert_null(u.name);
	assert_int_equal(u.ngroups, 1);
	assert_int_equal(u.groups[0], 4000000000u);
	proc__user_free(&u);

	struct passwd *pw = getpwuid(65534);

	if (pw) {
		char name[64];

		snprintf(name, sizeof(name), "%s", pw->pw_name);
		assert_int_equal(proc__user_from(&u, "65534", "65534"), 0);
		assert_true(u.set);
		assert_string_equal(u.name, name);
		assert_true(u.ngroups >= 1);
		assert_int_equal(u.groups[0], 65534); /* the primary group first */
		proc__user_free(&u);
	}
}

/* Restore SUDO_UID and SUDO_GID as they were. */
struct saved_env {
	char *uid, *gid;
};

static void env_save(struct saved_env *s)
{
	const char *u = getenv("SUDO_UID"), *g = getenv("SUDO_GID");

	s->uid = u ? strdup(u) : NULL;
	s->gid = g ? strdup(g) : NULL;
}

static void env_restore(struct saved_env *s)
{
	if (s->uid)
		setenv("SUDO_UID", s->uid, 1);
	else
		unsetenv("SUDO_UID");
	if (s->gid)
		setenv("SUDO_GID", s->gid, 1);
	else
		unsetenv("SUDO_GID");
	free(s->uid);
	free(s->gid);
}

static void need_root(void)
{
	if (geteuid() != 0) {
		print_message("not root: cannot switch users\n");
		skip();
	}
}

/* As root under sudo: the command runs as the user, and cannot come back. */
static void test_spawn_as_sudo_user(void **state)
{
	struct saved_env saved;
	struct proc_user u;
	char *check[] = { "sh", "-c",
		"test \"$(id -u)\" = 65534 && test \"$(id -g)\" = 65534 && "
		"test \"$(id -ru)\" = 65534 && test \"$(id -rg)\" = 65534 && "
		/* no capabilities left, in any set */
		"grep -q '^CapEff:[[:space:]]*0*$' /proc/self/status && "
		"grep -q '^CapPrm:[[:space:]]*0*$' /proc/self/status && "
		"grep -q '^CapAmb:[[:space:]]*0*$' /proc/self/status && "
		"test \"$SUDO_UID\" = 65534", NULL };
	char *groups[] = { "sh", "-c", "test \"$(id -G)\" = \"$EXPECT\"", NULL };
	char *env[] = { "sh", "-c", "test \"$HOME\" = \"$EXPECT\" && test \"$USER\" = \"$EXPECT_USER\" && "
		"test \"$LOGNAME\" = \"$EXPECT_USER\"", NULL };
	struct passwd *pw;

	(void)state;
	need_root();
	env_save(&saved);
	setenv("SUDO_UID", "65534", 1);
	setenv("SUDO_GID", "65534", 1);
	assert_int_equal(proc__sudo_user(&u), 0);
	assert_true(u.set);
	assert_int_equal(u.uid, 65534);
	assert_int_equal(u.gid, 65534);
	assert_int_equal(run(&u, check), 0);
	pw = getpwuid(65534);
	if (pw) {
		char expect[1024] = "";
		int len = 0;

		for (int i = 0; i < u.ngroups; i++)
			len += snprintf(expect + len, sizeof(expect) - len, "%s%u",
					i ? " " : "", (unsigned)u.groups[i]);
		setenv("EXPECT", expect, 1);
		assert_int_equal(run(&u, groups), 0);
		setenv("EXPECT", pw->pw_dir, 1);
		setenv("EXPECT_USER", pw->pw_name, 1);
		assert_int_equal(run(&u, env), 0);
		unsetenv("EXPECT");
		unsetenv("EXPECT_USER");
	}
	/* udpdrop's own ids and environment have not changed */
	assert_int_equal(geteuid(), 0);
	assert_int_equal(getuid(), 0);
	proc__user_free(&u);

	/* a user without a passwd entry: its SUDO_GID as its only group */
	setenv("SUDO_UID", "4000000", 1);
	setenv("SUDO_GID", "4000001", 1);
	assert_int_equal(proc__sudo_user(&u), 0);
	assert_true(u.set);
	char *nopw[] = { "sh", "-c", "test \"$(id -u)\" = 4000000 && test \"$(id -g)\" = 4000001 && "
		"test \"$(id -G)\" = 4000001", NULL };

	assert_int_equal(run(&u, nopw), 0);
	proc__user_free(&u);

	/* a command the user may not run: reported as not runnable */
	char file[] = "/tmp/test_proc_root.XXXXXX";
	char *rootonly[] = { file, NULL };
	enum proc_stage stage;
	pid_t pid;
	int fd = mkstemp(file);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "#!/bin/sh\nexit 0\n", 17), 17);
	close(fd);
	assert_int_equal(chmod(file, 0700), 0);
	setenv("SUDO_UID", "65534", 1);
	setenv("SUDO_GID", "65534", 1);
	assert_int_equal(proc__sudo_user(&u), 0);
	assert_int_equal(proc__spawn(rootonly, &u, &pid, &stage), -EACCES);
	assert_int_equal(stage, PROC_STAGE_EXEC);
	/* and root may */
	assert_int_equal(run(NULL, rootonly), 0);
	unlink(file);
	proc__user_free(&u);

	/* bad values: an error, not root */
	setenv("SUDO_UID", "65534x", 1);
	assert_int_equal(proc__sudo_user(&u), -EINVAL);
	assert_false(u.set);
	/* root ran sudo */
	setenv("SUDO_UID", "0", 1);
	setenv("SUDO_GID", "0", 1);
	assert_int_equal(proc__sudo_user(&u), 0);
	assert_false(u.set);
	unsetenv("SUDO_UID");
	unsetenv("SUDO_GID");
	assert_int_equal(proc__sudo_user(&u), 0);
	assert_false(u.set);
	env_restore(&saved);
}

/* Switching fails (not root here): said so, at the user stage. */
static void test_user_switch_fails(void **state)
{
	struct proc_user u = {};
	char *argv[] = { "true", NULL };
	enum proc_stage stage;
	pid_t pid, child;
	int status;

	(void)state;
	need_root();
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		int err;

		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(2);
		if (proc__user_from(&u, "4000000", "4000000"))
			_exit(3);
		err = proc__spawn(argv, &u, &pid, &stage);
		_exit(err == -EPERM && stage == PROC_STAGE_USER ? 0 : 1);
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
#define F(fn) cmocka_unit_test_setup_teardown(fn, fake_setup, fake_teardown)
	const struct CMUnitTest tests[] = {
		F(test_fake_children),
		F(test_fake_stat),
		cmocka_unit_test(test_real_tree),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_exit_codes),
		cmocka_unit_test(test_exec_fails),
		cmocka_unit_test(test_signals_reset),
		cmocka_unit_test(test_prepare_start_abort),
		cmocka_unit_test(test_death_signal),
		cmocka_unit_test(test_wait),
		cmocka_unit_test(test_user_parse),
		cmocka_unit_test(test_spawn_as_sudo_user),
		cmocka_unit_test(test_user_switch_fails),
	};
#undef F

	return cmocka_run_group_tests(tests, NULL, NULL);
}
