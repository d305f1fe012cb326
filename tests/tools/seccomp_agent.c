/* SPDX-License-Identifier: Apache-2.0 */
/*
 * seccomp_agent: the listener end of a seccomp profile's listenerPath, for
 * tests.
 *
 *   seccomp_agent [-t SECONDS] [-e ERRNO] SOCKET_PATH
 *
 * Listens on a unix stream socket at SOCKET_PATH and, for each connection
 * (one per process the runtime starts under the filter), prints the number
 * of fds that came with the message and the message (the container process
 * state) on one line each, then answers every notification on the fd with
 * -ERRNO (default ENOSPC, which no filter gives by itself), printing the
 * syscall number. Ends when the alarm (default 20 s) rings.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int listen_on(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(addr.sun_path))
		return -1;
	strcpy(addr.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 || listen(fd, 4) < 0)
		return -1;
	return fd;
}

/* The fd from the first message, the whole stream as the state. */
static int receive(int conn, char *data, size_t size)
{
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} control;
	struct iovec iov = { .iov_base = data, .iov_len = size - 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = control.buf, .msg_controllen = sizeof(control.buf) };
	ssize_t n = recvmsg(conn, &mh, MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -1;
	size_t len = (size_t)n;
	for (ssize_t m; len < size - 1 && (m = read(conn, data + len, size - 1 - len)) > 0;)
		len += (size_t)m;
	data[len] = '\0';
	int fd = -1, count = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			count = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			memcpy(&fd, CMSG_DATA(c), sizeof(int));
		}
	printf("fds: %d\n%s\n", count, data);
	fflush(stdout);
	return fd;
}

static void answer(int notify_fd, int error)
{
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;
	memset(&req, 0, sizeof(req));
	if (ioctl(notify_fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
		return;
	memset(&resp, 0, sizeof(resp));
	resp.id = req.id;
	resp.error = -error;
	printf("syscall %d\n", req.data.nr);
	fflush(stdout);
	ioctl(notify_fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

int main(int argc, char **argv)
{
	int opt, seconds = 20, error = ENOSPC;
	while ((opt = getopt(argc, argv, "t:e:")) != -1)
		if (opt == 't')
			seconds = atoi(optarg);
		else if (opt == 'e')
			error = atoi(optarg);
		else
			return 2;
	if (optind != argc - 1)
		return 2;
	alarm((unsigned)seconds);
	int sock = listen_on(argv[optind]);
	if (sock < 0) {
		perror("seccomp_agent");
		return 1;
	}
	struct pollfd fds[8] = { { .fd = sock, .events = POLLIN } };
	int n = 1;
	static char data[1 << 16];
	for (;;) {
		if (poll(fds, (nfds_t)n, -1) < 0)
			continue;
		if ((fds[0].revents & POLLIN) && n < 8) {
			int conn = accept4(sock, NULL, NULL, SOCK_CLOEXEC);
			int fd = conn >= 0 ? receive(conn, data, sizeof(data)) : -1;
			if (conn >= 0)
				close(conn);
			if (fd >= 0)
				fds[n++] = (struct pollfd){ .fd = fd, .events = POLLIN };
		}
		for (int i = 1; i < n; i++)
			if (fds[i].revents & POLLIN)
				answer(fds[i].fd, error);
			else if (fds[i].revents & (POLLHUP | POLLERR))
				fds[i].fd = -1;
	}
}
