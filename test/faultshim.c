/*-------------------------------------------------------------------------
 *
 * faultshim.c
 *	  Test-only LD_PRELOAD shim that injects faults into the writes of the
 *	  snowflake state file, and can slow down every fsync of the server.
 *	  Never installed, never linked into the extension: the TAP tests and
 *	  the benchmark suite (test/bench/run.sh) compile it and start a server
 *	  with it.
 *
 * The extension writes "snowflake.state.tmp", fsyncs it, renames it to
 * "snowflake.state" and fsyncs the data directory (opened as ".").  Without
 * the preload it also writes "snowflake.settings.tmp" and renames it to
 * "snowflake.settings" (not fsynced).  This shim marks the file descriptors
 * opened on those paths and, for the calls below, consults the control
 * file named by $SF_FAULT_CONTROL at every call on a marked descriptor (or
 * path).  Each line of the control file is "<step> <action>", or
 * "<step> <action> pid=<PID>" for a fault of process PID only (other
 * processes skip the line): a test chooses which of several processes that
 * may reach a write (a backend, the background writer) meets the fault.
 *
 *	step	open      opening "snowflake.state.tmp"
 *			write     write() or pwrite() on it
 *			fsync     fsync()/fdatasync() on it
 *			rename    renaming it
 *			dirfsync  fsync()/fdatasync() on "."
 *			settings_open, settings_write, settings_rename
 *					  the same for "snowflake.settings.tmp"
 *			anyfsync  every fsync()/fdatasync() of the process, whatever the
 *					  file: WAL, data files, the state file, directories (a
 *					  slow disk for the whole server: "anyfsync sleep=20")
 *	action	EACCES, ENOSPC, EIO, ...  fail with that errno
 *			hold      block for as long as the line stays in the file; the
 *					  PID of the blocked process is in "<control>.held"
 *					  meanwhile
 *			sleep=MS  sleep MS milliseconds, then make the real call
 *
 * No control file, or no line for the step (and this process): the real
 * call; the first line that applies wins.  An fsync of the
 * state file or the directory is subject to both "anyfsync" and its own
 * step, in that order: "anyfsync sleep=20" with "fsync EIO" sleeps, then
 * fails.  "anyfsync" reads the control file at every fsync of the process,
 * a few microseconds each.  Processes are single-threaded (PostgreSQL
 * backends), so no locking is needed.
 *
 *-------------------------------------------------------------------------
 */
#undef _FORTIFY_SOURCE
#define _GNU_SOURCE

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SHIM_TMP_NAME	"snowflake.state.tmp"
#define SHIM_SETTINGS_TMP_NAME	"snowflake.settings.tmp"
#define SHIM_MAX_FD		65536

enum
{
	MARK_NONE = 0,
	MARK_TMP,					/* the temporary state file */
	MARK_DIR,					/* the data directory, "." */
	MARK_SETTINGS				/* the temporary settings file */
};

static unsigned char shim_marks[SHIM_MAX_FD];

/* The real function, looked up once. */
#define REAL(name) \
	static __typeof__(name) *real_##name; \
	if (real_##name == NULL) \
		real_##name = (__typeof__(name) *) dlsym(RTLD_NEXT, #name)

static const struct
{
	const char *name;
	int			err;
}			shim_errnos[] =
{
	{"EACCES", EACCES}, {"ENOSPC", ENOSPC}, {"EIO", EIO}, {"EROFS", EROFS},
	{"EDQUOT", EDQUOT}, {"EMFILE", EMFILE}, {"EPERM", EPERM}
};

static void
shim_sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/*
 * Whether a line's text after its step, "<action>" or "<action> pid=<PID>",
 * applies to this process; if so, the action is copied into action.
 */
static int
shim_line_applies(const char *rest, char *action, size_t size)
{
	const char *space = strchr(rest, ' ');
	size_t		len = space ? (size_t) (space - rest) : strlen(rest);

	if (space != NULL)
	{
		char	   *end;
		long		pid;

		if (strncmp(space + 1, "pid=", 4) != 0)
			return 0;
		pid = strtol(space + 5, &end, 10);
		if (end == space + 5 || *end != '\0' || pid != (long) getpid())
			return 0;
	}
	if (len >= size)
		len = size - 1;
	memcpy(action, rest, len);
	action[len] = '\0';
	return 1;
}

/*
 * The action of the control file's first line for step that applies to
 * this process, copied into action (empty if there is none).
 */
static void
shim_lookup(const char *step, char *action, size_t size)
{
	const char *control = getenv("SF_FAULT_CONTROL");
	char		buf[4096];
	ssize_t		n;
	int			fd;
	char	   *line;
	char	   *save;
	size_t		len = strlen(step);

	REAL(open);
	REAL(close);

	action[0] = '\0';
	if (control == NULL || (fd = real_open(control, O_RDONLY)) < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	real_close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	for (line = strtok_r(buf, "\n", &save); line != NULL;
		 line = strtok_r(NULL, "\n", &save))
	{
		if (strncmp(line, step, len) == 0 && line[len] == ' ' &&
			shim_line_applies(line + len + 1, action, size))
			return;
	}
}

/* Write "<control>.held" with our PID, atomically. */
static void
shim_mark_held(const char *control, int held)
{
	char		path[4096];
	char		tmp[4096];
	char		pid[32];
	int			fd;
	int			len;

	REAL(open);
	REAL(write);
	REAL(close);
	REAL(rename);

	snprintf(path, sizeof(path), "%s.held", control);
	if (!held)
	{
		unlink(path);
		return;
	}
	snprintf(tmp, sizeof(tmp), "%s.held.tmp", control);
	len = snprintf(pid, sizeof(pid), "%d\n", (int) getpid());
	fd = real_open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return;
	if (real_write(fd, pid, len) != len)
	{
		real_close(fd);
		return;
	}
	real_close(fd);
	real_rename(tmp, path);
}

/*
 * Apply the control file's action for step: returns -1 with errno set if
 * the call must fail, 0 if the real call is to be made (possibly after a
 * sleep or a hold).
 */
static int
shim_fault(const char *step)
{
	char		action[256];
	int			saved_errno = errno;

	shim_lookup(step, action, sizeof(action));
	if (action[0] == '\0')
		return 0;
	if (strcmp(action, "hold") == 0)
	{
		shim_mark_held(getenv("SF_FAULT_CONTROL"), 1);
		do
		{
			shim_sleep_ms(5);
			shim_lookup(step, action, sizeof(action));
		} while (strcmp(action, "hold") == 0);
		shim_mark_held(getenv("SF_FAULT_CONTROL"), 0);
		errno = saved_errno;
		return 0;
	}
	if (strncmp(action, "sleep=", 6) == 0)
	{
		shim_sleep_ms(atol(action + 6));
		errno = saved_errno;
		return 0;
	}
	for (size_t i = 0; i < sizeof(shim_errnos) / sizeof(shim_errnos[0]); i++)
	{
		if (strcmp(action, shim_errnos[i].name) == 0)
		{
			errno = shim_errnos[i].err;
			return -1;
		}
	}
	errno = saved_errno;
	return 0;
}

/* Whether path names the file name, in any directory. */
static int
shim_is_named(const char *path, const char *name)
{
	const char *slash = strrchr(path, '/');

	return strcmp(slash ? slash + 1 : path, name) == 0;
}

static int
shim_is_tmp(const char *path)
{
	return shim_is_named(path, SHIM_TMP_NAME);
}

/* The step of an open, write or rename of a file marked mark, or NULL. */
static const char *
shim_step(int mark, const char *what)
{
	static const char *const settings_steps[][2] = {
		{"open", "settings_open"}, {"write", "settings_write"},
		{"rename", "settings_rename"}
	};

	if (mark == MARK_TMP)
		return what;
	if (mark != MARK_SETTINGS)
		return NULL;
	for (size_t i = 0; i < sizeof(settings_steps) / sizeof(settings_steps[0]); i++)
	{
		if (strcmp(settings_steps[i][0], what) == 0)
			return settings_steps[i][1];
	}
	return NULL;
}

/* Apply the fault of an open, write or rename of a marked file. */
static int
shim_fault_on(int mark, const char *what)
{
	const char *step = shim_step(mark, what);

	return step != NULL ? shim_fault(step) : 0;
}

/* What an open of path is: MARK_TMP, MARK_DIR or MARK_NONE. */
static int
shim_classify(const char *path)
{
	if (path == NULL)
		return MARK_NONE;
	if (shim_is_tmp(path))
		return MARK_TMP;
	if (shim_is_named(path, SHIM_SETTINGS_TMP_NAME))
		return MARK_SETTINGS;
	if (strcmp(path, ".") == 0)
		return MARK_DIR;
	return MARK_NONE;
}

static int
shim_mark(int fd, int mark)
{
	if (fd >= 0 && fd < SHIM_MAX_FD)
		shim_marks[fd] = (unsigned char) mark;
	return fd;
}

static int
shim_marked(int fd)
{
	return fd >= 0 && fd < SHIM_MAX_FD ? shim_marks[fd] : MARK_NONE;
}

/* The mode argument of an open call, present only with these flags. */
#define SHIM_MODE(flags, mode) \
	do { \
		if ((flags) & (O_CREAT | O_TMPFILE)) \
		{ \
			va_list		ap; \
			va_start(ap, flags); \
			mode = (mode_t) va_arg(ap, int); \
			va_end(ap); \
		} \
	} while (0)

int
open(const char *path, int flags,...)
{
	mode_t		mode = 0;
	int			mark = shim_classify(path);

	REAL(open);
	SHIM_MODE(flags, mode);
	if (shim_fault_on(mark, "open") != 0)
		return -1;
	return shim_mark(real_open(path, flags, mode), mark);
}

int
open64(const char *path, int flags,...)
{
	mode_t		mode = 0;
	int			mark = shim_classify(path);

	REAL(open64);
	SHIM_MODE(flags, mode);
	if (shim_fault_on(mark, "open") != 0)
		return -1;
	return shim_mark(real_open64(path, flags, mode), mark);
}

int
openat(int dirfd, const char *path, int flags,...)
{
	mode_t		mode = 0;
	int			mark = shim_classify(path);

	REAL(openat);
	SHIM_MODE(flags, mode);
	if (shim_fault_on(mark, "open") != 0)
		return -1;
	return shim_mark(real_openat(dirfd, path, flags, mode), mark);
}

int
openat64(int dirfd, const char *path, int flags,...)
{
	mode_t		mode = 0;
	int			mark = shim_classify(path);

	REAL(openat64);
	SHIM_MODE(flags, mode);
	if (shim_fault_on(mark, "open") != 0)
		return -1;
	return shim_mark(real_openat64(dirfd, path, flags, mode), mark);
}

int
close(int fd)
{
	REAL(close);
	shim_mark(fd, MARK_NONE);
	return real_close(fd);
}

ssize_t
write(int fd, const void *buf, size_t count)
{
	REAL(write);
	if (shim_fault_on(shim_marked(fd), "write") != 0)
		return -1;
	return real_write(fd, buf, count);
}

ssize_t
pwrite(int fd, const void *buf, size_t count, off_t offset)
{
	REAL(pwrite);
	if (shim_fault_on(shim_marked(fd), "write") != 0)
		return -1;
	return real_pwrite(fd, buf, count, offset);
}

ssize_t
pwrite64(int fd, const void *buf, size_t count, off64_t offset)
{
	REAL(pwrite64);
	if (shim_fault_on(shim_marked(fd), "write") != 0)
		return -1;
	return real_pwrite64(fd, buf, count, offset);
}

/* The step an fsync of fd is, or NULL. */
static const char *
shim_sync_step(int fd)
{
	switch (shim_marked(fd))
	{
		case MARK_TMP:
			return "fsync";
		case MARK_DIR:
			return "dirfsync";
		default:
			return NULL;
	}
}

int
fsync(int fd)
{
	const char *step = shim_sync_step(fd);

	REAL(fsync);
	if (shim_fault("anyfsync") != 0)
		return -1;
	if (step != NULL && shim_fault(step) != 0)
		return -1;
	return real_fsync(fd);
}

int
fdatasync(int fd)
{
	const char *step = shim_sync_step(fd);

	REAL(fdatasync);
	if (shim_fault("anyfsync") != 0)
		return -1;
	if (step != NULL && shim_fault(step) != 0)
		return -1;
	return real_fdatasync(fd);
}

int
rename(const char *oldpath, const char *newpath)
{
	REAL(rename);
	if (shim_fault_on(shim_classify(oldpath), "rename") != 0)
		return -1;
	return real_rename(oldpath, newpath);
}

int
renameat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath)
{
	REAL(renameat);
	if (shim_fault_on(shim_classify(oldpath), "rename") != 0)
		return -1;
	return real_renameat(olddirfd, oldpath, newdirfd, newpath);
}
