/*
 * hostns.c
 *	  Test only: run a command in a UTS namespace of its own, under a host
 *	  name the caller chooses, as the caller.  The TAP tests start a server
 *	  through it (SnowflakeTest.pm, start_snowflake_node's hostname option)
 *	  so that one configuration, shared by servers on one machine, derives
 *	  a node id of its own for each (snowflake.node_id_from = 'hostname').
 *	  Never installed, never linked into the extension.
 *
 *	  hostns NAME PROGRAM [ARG...]
 *
 * Two ways to get a namespace:
 *	- privileged (run by root, or installed setuid root by test/check.sh,
 *	  which runs the tests as "postgres", in Debian chroots too): create the
 *	  namespace, set the host name, then drop to the caller's real user and
 *	  group for good (all three ids) before running PROGRAM;
 *	- unprivileged (a user namespace, where the kernel allows them: not in
 *	  a chroot): become root of a new user namespace with a UTS namespace,
 *	  set the host name there, then enter a second user namespace that maps
 *	  the caller's user and group back, so that PROGRAM runs as the caller
 *	  (PostgreSQL refuses to run as root, and checks that it owns its data
 *	  directory).
 * Exit status 2 with a message if neither works.  As a setuid program it
 * gets the environment glibc leaves to one (no LD_PRELOAD, LD_LIBRARY_PATH
 * or TMPDIR).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static void
die(const char *what)
{
	fprintf(stderr, "hostns: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* Write text to /proc/self/<file>. */
static void
write_proc(const char *file, const char *text)
{
	char		path[64];
	int			fd;
	ssize_t		len = (ssize_t) strlen(text);

	snprintf(path, sizeof(path), "/proc/self/%s", file);
	fd = open(path, O_WRONLY);
	if (fd < 0 || write(fd, text, len) != len || close(fd) != 0)
		die(path);
}

/* Enter a new user namespace mapping inside_uid/gid to our current ids. */
static void
enter_userns(uid_t inside_uid, gid_t inside_gid, int more_flags)
{
	uid_t		uid = geteuid();
	gid_t		gid = getegid();
	char		map[64];

	if (unshare(CLONE_NEWUSER | more_flags) != 0)
		die("unshare (user namespace)");
	write_proc("setgroups", "deny");
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned) inside_uid, (unsigned) uid);
	write_proc("uid_map", map);
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned) inside_gid, (unsigned) gid);
	write_proc("gid_map", map);
}

int
main(int argc, char **argv)
{
	uid_t		uid = getuid();
	gid_t		gid = getgid();

	if (argc < 3)
	{
		fprintf(stderr, "usage: hostns NAME PROGRAM [ARG...]\n");
		return 2;
	}
	if (geteuid() == 0)
	{
		if (unshare(CLONE_NEWUTS) != 0)
			die("unshare (UTS namespace)");
		if (sethostname(argv[1], strlen(argv[1])) != 0)
			die("sethostname");
		if (setgid(gid) != 0 || setuid(uid) != 0)
			die("dropping privileges");
		if (uid != 0 && (setuid(0) == 0 || geteuid() == 0))
		{
			fprintf(stderr, "hostns: privileges not dropped\n");
			return 2;
		}
	}
	else
	{
		enter_userns(0, 0, CLONE_NEWUTS);
		if (sethostname(argv[1], strlen(argv[1])) != 0)
			die("sethostname");
		enter_userns(uid, gid, 0);
	}
	execvp(argv[2], argv + 2);
	die(argv[2]);
	return 2;
}
