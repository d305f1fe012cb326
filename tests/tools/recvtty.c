/* SPDX-License-Identifier: Apache-2.0 */
/*
 * recvtty: the receiving end of a runtime's --console-socket, for tests.
 *
 *   recvtty [-t SECONDS] SOCKET_PATH
 *
 * Listens on a unix stream socket at SOCKET_PATH, accepts one connection,
 * takes the pty master the runtime passes with SCM_RIGHTS, and copies
 * everything the container writes to its terminal to stdout until the
 * terminal closes (read gives EIO or EOF). Prints "recvtty: no fd" and
 * exits 2 when the message carries no descriptor. An alarm (default 30 s)
 * bounds the whole run so a broken runtime cannot hang the suite.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int listen_on(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(addr.sun_path)) {
		fprintf(stderr, "recvtty: socket path too long\n");
		return -1;
	}
	strcpy(addr.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 || listen(fd, 1) < 0) {
		perror("recvtty: socket");
		return -1;
	}
	return fd;
}

/* One message, one byte or more of payload, and the fd in its control data. */
static int receive_fd(int conn)
{
	char payload[4096];
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} control;
	struct iovec iov = { .iov_base = payload, .iov_len = sizeof(payload) };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = control.buf, .msg_controllen = sizeof(control.buf),
	};
	ssize_t n;
	do {
		n = recvmsg(conn, &msg, MSG_CMSG_CLOEXEC);
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		perror("recvtty: recvmsg");
		return -1;
	}
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	if (c == NULL || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) {
		fprintf(stderr, "recvtty: no fd\n");
		return -2;
	}
	int fd;
	memcpy(&fd, CMSG_DATA(c), sizeof(fd));
	return fd;
}

static int copy_out(int master)
{
	char buf[4096];
	for (;;) {
		ssize_t n = read(master, buf, sizeof(buf));
		if (n == 0 || (n < 0 && errno == EIO))
			return 0; /* every slave fd is closed: the container is done */
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			perror("recvtty: read");
			return 1;
		}
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(STDOUT_FILENO, buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				return 1;
			off += w;
		}
	}
}

int main(int argc, char **argv)
{
	unsigned timeout = 30;
	int opt;
	while ((opt = getopt(argc, argv, "t:")) != -1) {
		if (opt != 't') {
			fprintf(stderr, "usage: recvtty [-t SECONDS] SOCKET_PATH\n");
			return 2;
		}
		timeout = (unsigned)strtoul(optarg, NULL, 10);
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "usage: recvtty [-t SECONDS] SOCKET_PATH\n");
		return 2;
	}
	alarm(timeout);
	int sock = listen_on(argv[optind]);
	if (sock < 0)
		return 1;
	int conn = accept4(sock, NULL, NULL, SOCK_CLOEXEC);
	if (conn < 0) {
		perror("recvtty: accept");
		return 1;
	}
	int master = receive_fd(conn);
	close(conn);
	close(sock);
	unlink(argv[optind]);
	if (master < 0)
		return 2;
	return copy_out(master);
}
