/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Processes: a process tree from /proc, and running a command for
 * `record -- COMMAND` (as the user who ran sudo, in udpdrop's process
 * group, with its exit code passed through as a shell would).
 */
#ifndef UD_PROC_H
#define UD_PROC_H

#include <stdbool.h>
#include <sys/types.h>

/*
 * root and every live descendant of it (children, grandchildren, ...),
 * root first, at most max of them; returns how many, or -ESRCH when root
 * does not exist. Read from /proc/PID/task/TID/children, or where the
 * kernel has no such file, from the parent pid in every /proc/PID/stat.
 * A process whose parent exited is reparented (to init or a subreaper)
 * and is no longer found from root.
 */
int proc__descendants(int root, int *pids, int max);
/* The same from another /proc (the tests' fake trees). */
int proc__descendants_at(const char *procdir, int root, int *pids, int max);

/*
 * Is there a process pid that udpdrop may signal? 0: yes; -ESRCH: no such
 * process; -EPERM: there is one, not ours (another user's, as non-root).
 */
int proc__check(int pid);

/* Who the command runs as. */
struct proc_user {
	bool set;           /* false: as udpdrop runs (nothing changes) */
	uid_t uid;
	gid_t gid;
	gid_t *groups;      /* supplementary groups, the user's as initgroups sets them */
	int ngroups;
	char *name, *home;  /* from the passwd entry; NULL when it has none */
};

/*
 * The user who ran `sudo udpdrop`: SUDO_UID and SUDO_GID from the
 * environment, when udpdrop runs as root (else nothing is set: the command
 * runs as udpdrop does). Its groups and name are looked up here, in the
 * parent (no passwd lookup after fork): with no passwd entry its only
 * group is SUDO_GID. SUDO_UID 0 (root ran sudo) sets nothing. -EINVAL when
 * a SUDO_ variable is there but is not a valid id (digits, below 2^32-1),
 * or SUDO_UID is without SUDO_GID; -ENOMEM.
 */
int proc__sudo_user(struct proc_user *u);
/* The same from given values (NULL: unset), as if udpdrop were root. */
int proc__user_from(struct proc_user *u, const char *sudo_uid, const char *sudo_gid);
void proc__user_free(struct proc_user *u);

/* Where starting the command failed. */
enum proc_stage {
	PROC_STAGE_NONE,    /* it did not */
	PROC_STAGE_SPAWN,   /* pipe, fork, or the environment: in udpdrop */
	PROC_STAGE_USER,    /* switching to the user (setgroups, setgid, setuid) */
	PROC_STAGE_EXEC,    /* execvp: the command was not found or cannot run */
};

/*
 * A command forked and held before its exec (as `perf record` does): the
 * pid is known, so tracing can start before the command does.
 */
struct proc_child {
	pid_t pid;          /* 0: none */
	int go_fd;          /* the child execs when a byte comes here */
	int err_fd;         /* what went wrong in the child ({stage, errno}), or EOF */
};

/*
 * The signal a prepared command gets when udpdrop dies before it
 * (PR_SET_PDEATHSIG): SIGTERM, or SIGKILL when udpdrop was started with
 * SIGTERM ignored.
 */
int proc__death_signal(void);

/*
 * Fork the child for argv (argv[0] looked up in PATH as execvp does).
 * The child stays in udpdrop's process group (Ctrl-C at the terminal
 * reaches it, as without udpdrop), gets an empty signal mask and default
 * dispositions (a signal udpdrop itself was started with ignored, as
 * under nohup, stays ignored), switches to `as` (when set: groups, gid,
 * uid, and checks it cannot become root again; HOME, USER and LOGNAME
 * from its passwd entry), is set to get proc__death_signal() when udpdrop
 * dies, then waits for proc__start. udpdrop's fds
 * without FD_CLOEXEC are inherited. A SIGCHLD udpdrop ignores is set back
 * to its default, or the command's end could not be waited for. 0, or a
 * negative errno (-EINVAL: no argv[0]; nothing forked).
 */
int proc__prepare(struct proc_child *c, char *const argv[], const struct proc_user *as);
/*
 * Let the prepared child exec, and learn whether it did: 0 (running; reap
 * it with proc__wait), or a negative errno with *stage where it failed
 * (the child has been reaped, c->pid is 0).
 */
int proc__start(struct proc_child *c, enum proc_stage *stage);
/* Kill and reap a prepared child that is not to run. */
void proc__abort(struct proc_child *c);
/* proc__prepare, then proc__start: *pid is the running command. */
int proc__spawn(char *const argv[], const struct proc_user *as, pid_t *pid,
		enum proc_stage *stage);

/*
 * The shell's exit code for a command that could not be started at
 * PROC_STAGE_EXEC with err (positive): 127 not found, 126 found but not
 * runnable (permission denied, not an executable, a directory).
 */
int proc__exec_code(int err);

/*
 * Reap child pid: 1 and *code when it has ended (its exit status 0..255,
 * or 128 + the signal that killed it, as a shell says), 0 while it runs
 * (nohang only), or a negative errno (-ECHILD: not a child, or already
 * reaped). Without nohang it blocks until the child ends; a signal
 * handler running meanwhile does not interrupt it.
 */
int proc__wait(pid_t pid, bool nohang, int *code);

#endif
