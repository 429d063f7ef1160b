// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "proc.h"
#include "util.h"

/* --- the process tree --- */

static bool has_pid(const int *pids, int n, int pid)
{
	for (int i = 0; i < n; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* Add the children named in one task's children file ("12 34 "). */
static int add_children_of_task(const char *path, int *pids, int n, int max)
{
	FILE *f = fopen(path, "re");
	int child;

	if (!f)
		return n; /* the thread or the process has gone */
	while (n < max && fscanf(f, "%d", &child) == 1)
		if (child > 0 && !has_pid(pids, n, child))
			pids[n++] = child;
	fclose(f);
	return n;
}

/* Breadth first through each process's threads' children files. */
static int tree_by_children(const char *procdir, int *pids, int n, int max)
{
	char path[PATH_MAX];

	for (int i = 0; i < n && n < max; i++) {
		struct dirent *de;
		DIR *tasks;

		snprintf(path, sizeof(path), "%s/%d/task", procdir, pids[i]);
		tasks = opendir(path);
		if (!tasks)
			continue; /* gone since its parent named it */
		while (n < max && (de = readdir(tasks))) {
			if (!all_digits(de->d_name))
				continue;
			snprintf(path, sizeof(path), "%s/%d/task/%s/children", procdir,
				 pids[i], de->d_name);
			n = add_children_of_task(path, pids, n, max);
		}
		closedir(tasks);
	}
	return n;
}

/*
 * The parent pid from /proc/PID/stat: "pid (comm) state ppid ...", where
 * comm may hold spaces and ')': it ends at the last ')'.
 */
static int stat_ppid(const char *path)
{
	char buf[1024];
	ssize_t len;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ppid;
	char state, *p;

	if (fd < 0)
		return -1;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return -1;
	buf[len] = '\0';
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %c %d", &state, &ppid) != 2)
		return -1;
	return ppid;
}

struct pid_pair {
	int pid, ppid;
};

/* Without children files: every process's parent, then breadth first. */
static int tree_by_stat(const char *procdir, int *pids, int n, int max)
{
	struct pid_pair *v = NULL;
	int nv = 0, cap = 0;
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(procdir);

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		int ppid;

		if (!all_digits(de->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s/stat", procdir, de->d_name);
		ppid = stat_ppid(path);
		if (ppid <= 0)
			continue; /* gone, or a root of the pid namespace */
		if (nv == cap) {
			int ncap = cap ? 2 * cap : 256;
			struct pid_pair *nvp = realloc(v, ncap * sizeof(*nvp));

			if (!nvp) {
				free(v);
				closedir(d);
				return -ENOMEM;
			}
			v = nvp;
			cap = ncap;
		}
		v[nv].pid = atoi(de->d_name);
		v[nv++].ppid = ppid;
	}
	closedir(d);
	for (int i = 0; i < n && n < max; i++)
		for (int j = 0; j < nv && n < max; j++)
			if (v[j].ppid == pids[i] && !has_pid(pids, n, v[j].pid))
				pids[n++] = v[j].pid;
	free(v);
	return n;
}

int proc__descendants_at(const char *procdir, int root, int *pids, int max)
{
	char path[PATH_MAX];
	struct stat st;

	if (root <= 0)
		return -ESRCH;
	if (max < 1)
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/%d", procdir, root);
	if (stat(path, &st))
		return errno == ENOENT ? -ESRCH : -errno;
	pids[0] = root;
	/* the children files need CONFIG_PROC_CHILDREN */
	snprintf(path, sizeof(path), "%s/%d/task/%d/children", procdir, root, root);
	if (!access(path, R_OK))
		return tree_by_children(procdir, pids, 1, max);
	return tree_by_stat(procdir, pids, 1, max);
}

int proc__descendants(int root, int *pids, int max)
{
	return proc__descendants_at("/proc", root, pids, max);
}

int proc__check(int pid)
{
	if (pid <= 0)
		return -ESRCH; /* kill() would take those as a process group */
	if (!kill(pid, 0))
		return 0;
	return errno == EPERM ? -EPERM : -ESRCH;
}

/* --- the user --- */

void proc__user_free(struct proc_user *u)
{
	free(u->groups);
	free(u->name);
	free(u->home);
	memset(u, 0, sizeof(*u));
}

static int parse_id(const char *s, uint32_t *out)
{
	uint64_t v;

	/* digits only; (uid_t)-1 means "no change" to setresuid */
	if (parse_u64(s, 0, UINT32_MAX - 1, &v))
		return -EINVAL;
	*out = v;
	return 0;
}

int proc__user_from(struct proc_user *u, const char *sudo_uid, const char *sudo_gid)
{
	struct passwd pw, *pwp = NULL;
	uint32_t uid, gid;
	char *buf;
	long buflen = sysconf(_SC_GETPW_R_SIZE_MAX);

	memset(u, 0, sizeof(*u));
	if (!sudo_uid && !sudo_gid)
		return 0;
	if (!sudo_uid || !sudo_gid || parse_id(sudo_uid, &uid) || parse_id(sudo_gid, &gid))
		return -EINVAL;
	if (uid == 0)
		return 0; /* root ran sudo: run as root */
	u->uid = uid;
	u->gid = gid;
	if (buflen < 16384)
		buflen = 16384;
	buf = malloc(buflen);
	if (!buf)
		return -ENOMEM;
	/* no entry (or no way to read it) is not an error: gid alone then */
	if (getpwuid_r(uid, &pw, buf, buflen, &pwp))
		pwp = NULL;
	if (pwp) {
		int n = 64;

		u->name = strdup(pw.pw_name);
		u->home = pw.pw_dir ? strdup(pw.pw_dir) : NULL;
		if (!u->name || (pw.pw_dir && !u->home))
			goto nomem;
		for (;;) {
			int got = n;

			u->groups = malloc(n * sizeof(*u->groups));
			if (!u->groups)
				goto nomem;
			if (getgrouplist(pw.pw_name, gid, u->groups, &got) >= 0) {
				u->ngroups = got;
				break;
			}
			/* too few: got says how many there are */
			free(u->groups);
			u->groups = NULL;
			n = got > n ? got : 2 * n;
			if (n > 65536) /* NGROUPS_MAX */
				goto nomem;
		}
	} else {
		u->groups = malloc(sizeof(*u->groups));
		if (!u->groups)
			goto nomem;
		u->groups[0] = gid;
		u->ngroups = 1;
	}
	free(buf);
	u->set = true;
	return 0;
nomem:
	free(buf);
	proc__user_free(u);
	return -ENOMEM;
}

int proc__sudo_user(struct proc_user *u)
{
	memset(u, 0, sizeof(*u));
	if (geteuid() != 0)
		return 0; /* cannot switch anyway: the command runs as udpdrop */
	return proc__user_from(u, getenv("SUDO_UID"), getenv("SUDO_GID"));
}

/* --- running the command --- */

/*
 * The signals udpdrop was started with ignored (nohup, a shell's
 * background job): the command gets them ignored too, as it would have
 * without udpdrop in between. Read before main, before udpdrop sets its
 * own handlers.
 */
static sigset_t ignored_at_start;

__attribute__((constructor)) static void note_ignored_signals(void)
{
	sigemptyset(&ignored_at_start);
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction sa;

		if (!sigaction(sig, NULL, &sa) && !(sa.sa_flags & SA_SIGINFO) &&
		    sa.sa_handler == SIG_IGN)
			sigaddset(&ignored_at_start, sig);
	}
}

struct child_err {
	int stage, err;
};

/* In the child: tell the parent, and go. */
static void __attribute__((noreturn)) child_fail(int fd, int stage, int err)
{
	struct child_err e = { stage, err };
	ssize_t n;

	do
		n = write(fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	_exit(127);
}

/*
 * The signal the command gets when udpdrop dies first: SIGTERM, to let it
 * clean up; SIGKILL when udpdrop was started with SIGTERM ignored (the
 * command has it ignored too, so SIGTERM would not end it).
 */
int proc__death_signal(void)
{
	return sigismember(&ignored_at_start, SIGTERM) ? SIGKILL : SIGTERM;
}

/* In the child, after fork: only async-signal-safe calls. */
static void __attribute__((noreturn))
child_run(char *const argv[], char *const envp[], const struct proc_user *as,
	  pid_t parent, int go_fd, int err_fd)
{
	sigset_t none;
	char go;
	ssize_t n;

	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction sa = { .sa_handler = SIG_DFL };

		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		if (sigismember(&ignored_at_start, sig))
			sa.sa_handler = SIG_IGN;
		sigemptyset(&sa.sa_mask);
		sigaction(sig, &sa, NULL); /* glibc's own signals fail: fine */
	}
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);

	if (as && as->set) {
		if (setgroups(as->ngroups, as->groups))
			child_fail(err_fd, PROC_STAGE_USER, errno);
		if (setresgid(as->gid, as->gid, as->gid))
			child_fail(err_fd, PROC_STAGE_USER, errno);
		if (setresuid(as->uid, as->uid, as->uid))
			child_fail(err_fd, PROC_STAGE_USER, errno);
		/* no way back to root */
		if (as->uid != 0 && (!setuid(0) || !seteuid(0) || geteuid() != as->uid ||
				     getuid() != as->uid))
			child_fail(err_fd, PROC_STAGE_USER, EPERM);
		if (getegid() != as->gid || getgid() != as->gid)
			child_fail(err_fd, PROC_STAGE_USER, EPERM);
	}
	/*
	 * The command lives no longer than udpdrop: killed (even with
	 * SIGKILL), udpdrop takes it along. Set after the switch to the user,
	 * which clears it; it fires when the thread that forked us ends (the
	 * main thread: udpdrop forks from nowhere else) and survives exec,
	 * but not an exec of a set-user-ID program. If udpdrop died before
	 * it was set, the parent is another already: go now.
	 */
	if (prctl(PR_SET_PDEATHSIG, proc__death_signal()) || getppid() != parent)
		_exit(127);

	do
		n = read(go_fd, &go, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		_exit(127); /* udpdrop gave up on it (or died) */
	close(go_fd);
	execvpe(argv[0], argv, envp);
	child_fail(err_fd, PROC_STAGE_EXEC, errno);
}

/* "NAME=value" for the child's environment. */
static char *env_entry(const char *name, const char *value)
{
	size_t len = strlen(name) + strlen(value) + 2;
	char *s = malloc(len);

	if (s)
		snprintf(s, len, "%s=%s", name, value);
	return s;
}

static bool env_is(const char *entry, const char *name)
{
	size_t len = strlen(name);

	return !strncmp(entry, name, len) && entry[len] == '=';
}

/*
 * udpdrop's environment, with HOME, USER and LOGNAME those of `as` when it
 * has a passwd entry; built before fork. *own: the entries to free.
 */
static char **child_env(const struct proc_user *as, char **own)
{
	extern char **environ;
	static const char *const names[] = { "HOME", "USER", "LOGNAME" };
	const char *values[3];
	char **envp;
	int n = 0, k = 0;

	if (!as || !as->set || !as->name)
		return environ;
	values[0] = as->home;
	values[1] = values[2] = as->name;
	while (environ && environ[n])
		n++;
	envp = calloc(n + ARRAY_SIZE(names) + 1, sizeof(*envp));
	if (!envp)
		return NULL;
	for (int i = 0; i < n; i++) {
		bool replaced = false;

		for (size_t j = 0; j < ARRAY_SIZE(names); j++)
			replaced |= env_is(environ[i], names[j]);
		if (!replaced)
			envp[k++] = environ[i];
	}
	for (size_t j = 0; j < ARRAY_SIZE(names); j++) {
		if (!values[j])
			continue;
		own[j] = env_entry(names[j], values[j]);
		if (!own[j]) {
			for (size_t i = 0; i < j; i++)
				free(own[i]);
			free(envp);
			return NULL;
		}
		envp[k++] = own[j];
	}
	return envp;
}

int proc__prepare(struct proc_child *c, char *const argv[], const struct proc_user *as)
{
	extern char **environ;
	char *own[3] = {};
	char **envp;
	int go[2], errp[2], err = 0;
	sigset_t all, old;
	struct sigaction sa;
	pid_t pid, self;

	memset(c, 0, sizeof(*c));
	c->go_fd = c->err_fd = -1;
	if (!argv || !argv[0])
		return -EINVAL;
	/* an ignored SIGCHLD would reap the command before we see its code */
	if (!sigaction(SIGCHLD, NULL, &sa) && !(sa.sa_flags & SA_SIGINFO) &&
	    sa.sa_handler == SIG_IGN)
		signal(SIGCHLD, SIG_DFL);
	envp = child_env(as, own);
	if (!envp)
		return -ENOMEM;
	/* go: a socket, so that a write to a child already dead raises no SIGPIPE */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, go)) {
		err = -errno;
		goto out;
	}
	if (pipe2(errp, O_CLOEXEC)) {
		err = -errno;
		close(go[0]);
		close(go[1]);
		goto out;
	}
	/* no handler of udpdrop's runs in the child */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	self = getpid();
	pid = fork();
	if (pid == 0) {
		close(go[0]);
		close(errp[0]);
		child_run(argv, envp, as, self, go[1], errp[1]);
	}
	if (pid < 0)
		err = -errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(go[1]);
	close(errp[1]);
	if (err) {
		close(go[0]);
		close(errp[0]);
		goto out;
	}
	c->pid = pid;
	c->go_fd = go[0];
	c->err_fd = errp[0];
out:
	if (envp != environ)
		free(envp);
	for (size_t i = 0; i < ARRAY_SIZE(own); i++)
		free(own[i]);
	return err;
}

static void reap(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
}

void proc__abort(struct proc_child *c)
{
	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		reap(c->pid);
	}
	if (c->go_fd >= 0)
		close(c->go_fd);
	if (c->err_fd >= 0)
		close(c->err_fd);
	c->pid = 0;
	c->go_fd = c->err_fd = -1;
}

int proc__start(struct proc_child *c, enum proc_stage *stage)
{
	struct child_err e;
	size_t got = 0;
	ssize_t n;

	*stage = PROC_STAGE_NONE;
	if (c->pid <= 0 || c->go_fd < 0 || c->err_fd < 0) {
		*stage = PROC_STAGE_SPAWN;
		return -EINVAL;
	}
	do
		n = send(c->go_fd, "g", 1, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	/* a failure here (the child gone) shows below: it wrote why, or EOF */
	close(c->go_fd);
	c->go_fd = -1;
	/* EOF: the exec closed the pipe (or the child died before it) */
	while (got < sizeof(e)) {
		n = read(c->err_fd, (char *)&e + got, sizeof(e) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
	}
	close(c->err_fd);
	c->err_fd = -1;
	if (got < sizeof(e))
		return 0;
	reap(c->pid);
	c->pid = 0;
	*stage = e.stage;
	return e.err > 0 ? -e.err : -EIO;
}

int proc__spawn(char *const argv[], const struct proc_user *as, pid_t *pid,
		enum proc_stage *stage)
{
	struct proc_child c;
	int err;

	*pid = 0;
	*stage = PROC_STAGE_NONE;
	err = proc__prepare(&c, argv, as);
	if (err) {
		*stage = PROC_STAGE_SPAWN;
		return err;
	}
	err = proc__start(&c, stage);
	if (!err)
		*pid = c.pid;
	return err;
}

int proc__exec_code(int err)
{
	return err == ENOENT ? 127 : 126;
}

int proc__wait(pid_t pid, bool nohang, int *code)
{
	int status;
	pid_t r;

	if (pid <= 0)
		return -ECHILD; /* not "any child" */
	for (;;) {
		r = waitpid(pid, &status, nohang ? WNOHANG : 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return 0;
		if (WIFEXITED(status)) {
			*code = WEXITSTATUS(status);
			return 1;
		}
		if (WIFSIGNALED(status)) {
			*code = 128 + WTERMSIG(status);
			return 1;
		}
		/* stopped or continued: not asked for, but not an end either */
		if (nohang)
			return 0;
	}
}
