/* The subscribers of benchmarks/events.py (--client c): N bare sockets on one epoll,
 * each reading a table's Server-Sent Events, each `id:` line stamped on CLOCK_MONOTONIC
 * (Python's time.monotonic) just before the read that returned it. A read costs a
 * system call and a scan here, so the figures are the server's delivery and not the
 * subscribers' own reading, as far as one process can make them.
 *
 *   events_client HOST PORT EXPECTED PATH...     (one socket per PATH)
 *
 * Prints "connected" once every request is sent, then, when every socket has EXPECTED
 * ids (or 300 s passed), one line per id: "<socket index> <seq> <seconds>".
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define TAIL 32

struct sub {
  int fd;
  long got;
  long *seqs;
  double *times;
  char tail[TAIL];
  int tail_len;
};

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Every "id: N\n" at a line's start in tail + data; the last TAIL bytes are kept so a
 * line split between two reads is found whole in the second (and never counted twice:
 * only lines that end in the new data count). */
static void scan(struct sub *s, const char *data, int n, double at, long expected) {
  static char buffer[TAIL + 65536];
  memcpy(buffer, s->tail, s->tail_len);
  memcpy(buffer + s->tail_len, data, n);
  int len = s->tail_len + n, old = s->tail_len;
  for (int i = 0; i + 4 <= len; i++) {
    if ((i == 0 || buffer[i - 1] == '\n') && memcmp(buffer + i, "id: ", 4) == 0) {
      long seq = 0;
      int j = i + 4;
      while (j < len && buffer[j] >= '0' && buffer[j] <= '9') seq = seq * 10 + (buffer[j++] - '0');
      if (j < len && (buffer[j] == '\n' || buffer[j] == '\r') && j >= old && s->got < expected) {
        s->seqs[s->got] = seq;
        s->times[s->got] = at;
        s->got++;
      }
    }
  }
  int keep = len < TAIL ? len : TAIL;
  memcpy(s->tail, buffer + len - keep, keep);
  s->tail_len = keep;
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: %s HOST PORT EXPECTED PATH...\n", argv[0]);
    return 2;
  }
  const char *host = argv[1];
  int port = atoi(argv[2]);
  long expected = atol(argv[3]);
  int count = argc - 4;
  struct sub *subs = calloc(count, sizeof *subs);
  int poller = epoll_create1(0);
  struct sockaddr_in where = {.sin_family = AF_INET, .sin_port = htons(port)};
  inet_pton(AF_INET, host, &where.sin_addr);
  char request[1024];
  for (int i = 0; i < count; i++) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(fd, (struct sockaddr *)&where, sizeof where) != 0) {
      perror("connect");
      return 1;
    }
    int length = snprintf(request, sizeof request,
                          "GET %s HTTP/1.1\r\nHost: %s:%d\r\nAccept: text/event-stream\r\n\r\n",
                          argv[4 + i], host, port);
    if (write(fd, request, length) != length) {
      perror("write");
      return 1;
    }
    subs[i].fd = fd;
    subs[i].seqs = calloc(expected, sizeof(long));
    subs[i].times = calloc(expected, sizeof(double));
    struct epoll_event event = {.events = EPOLLIN, .data.u32 = (unsigned)i};
    epoll_ctl(poller, EPOLL_CTL_ADD, fd, &event);
  }
  printf("connected\n");
  fflush(stdout);
  int open = count;
  double deadline = now() + 300;
  static char data[65536];
  struct epoll_event ready[256];
  while (open > 0 && now() < deadline) {
    int n = epoll_wait(poller, ready, 256, 5000);
    for (int k = 0; k < n; k++) {
      struct sub *s = &subs[ready[k].data.u32];
      double at = now();
      ssize_t got = read(s->fd, data, sizeof data);
      if (got > 0) scan(s, data, (int)got, at, expected);
      if (got <= 0 || s->got >= expected) {
        epoll_ctl(poller, EPOLL_CTL_DEL, s->fd, NULL);
        close(s->fd);
        open--;
      }
    }
  }
  for (int i = 0; i < count; i++)
    for (long j = 0; j < subs[i].got; j++) printf("%d %ld %.6f\n", i, subs[i].seqs[j], subs[i].times[j]);
  return 0;
}
