/* The parts of the S3 client that need no server. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "s3_client.h"

static void check_enc(const char *in, bool slash, const char *want)
{
    char *got = s3_uri_encode(in, slash);
    cr_assert_not_null(got);
    cr_assert_str_eq(got, want);
    free(got);
}

Test(s3_uri_encode, sigv4_rules)
{
    check_enc("abcXYZ019-_.~", true, "abcXYZ019-_.~");
    check_enc("a b+c%d=e", true, "a%20b%2Bc%25d%3De");
    check_enc("dir/sub/file", true, "dir/sub/file");
    check_enc("dir/sub/file", false, "dir%2Fsub%2Ffile");
    check_enc("\xc3\xa9", true, "%C3%A9");
    check_enc("*&?#", true, "%2A%26%3F%23");
    check_enc("", true, "");
}

Test(store_status, errno_mapping)
{
    cr_assert_eq(store_status_errno(STORE_OK), 0);
    cr_assert_eq(store_status_errno(STORE_ERR_NOT_FOUND), ENOENT);
    cr_assert_eq(store_status_errno(STORE_ERR_ACCESS), EACCES);
    cr_assert_eq(store_status_errno(STORE_ERR_CHANGED), EIO);
    cr_assert_eq(store_status_errno(STORE_ERR_PROTOCOL), EIO);
    cr_assert_str_eq(store_status_name(STORE_ERR_CHANGED), "object changed");
}

/* ---- the scheduler without a server: a closed port refuses at once -------- */

#include <pthread.h>
#include <time.h>

static s3_client *client_on_closed_port(unsigned in_flight)
{
    static aws_credentials anon = {.anonymous = true, .region = "us-east-1", .source = "anonymous"};
    s3_client_config cfg = {
        .endpoint = "http://127.0.0.1:1", /* tcpmux: nobody listens here */
        .bucket = "b",
        .creds = &anon,
        .max_connections = in_flight,
        .connect_timeout_ms = 2000,
        .retry = {.max_attempts = 2, .base_ms = 1, .cap_ms = 2},
    };
    s3_client *c = NULL;
    sv_error err = {0};
    cr_assert_eq(s3_client_create(&cfg, &c, &err), STORE_OK, "%s", err.msg);
    return c;
}

Test(s3_client, in_flight_limit_is_clamped_and_settable)
{
    s3_client *c = client_on_closed_port(0);
    cr_assert_eq(s3_client_in_flight_limit(c), 32);
    s3_client_set_in_flight(c, 512);
    cr_assert_eq(s3_client_in_flight_limit(c), 512);
    s3_client_set_in_flight(c, 0);
    cr_assert_eq(s3_client_in_flight_limit(c), 1);
    s3_client_set_in_flight(c, 5000);
    cr_assert_eq(s3_client_in_flight_limit(c), S3_CLIENT_MAX_IN_FLIGHT);
    s3_client_destroy(c);
    c = client_on_closed_port(100000);
    cr_assert_eq(s3_client_in_flight_limit(c), S3_CLIENT_MAX_IN_FLIGHT);
    s3_client_destroy(c);
}

Test(s3_client, deadlines_default_and_partial_update)
{
    s3_client *c = client_on_closed_port(4);
    s3_deadlines d = s3_client_deadlines(c);
    cr_assert_eq(d.first_byte_ms, 10000);
    cr_assert_eq(d.progress_window_ms, 10000);
    cr_assert_eq(d.min_body_rate, 1024);
    cr_assert_eq(d.body_slack_ms, 10000);
    s3_client_set_deadlines(c, &(s3_deadlines){.progress_window_ms = 3000, .min_body_rate = 65536});
    d = s3_client_deadlines(c);
    cr_assert_eq(d.first_byte_ms, 10000);
    cr_assert_eq(d.progress_window_ms, 3000);
    cr_assert_eq(d.min_body_rate, 65536);
    cr_assert_eq(d.body_slack_ms, 10000);
    s3_client_destroy(c);
}

typedef struct {
    pthread_mutex_t m;
    pthread_cond_t cv;
    unsigned done, network_errors;
} completion_count;

static void count_done(void *ud, store_status st, const char *errmsg)
{
    (void)errmsg;
    completion_count *cc = ud;
    pthread_mutex_lock(&cc->m);
    cc->done++;
    if (st == STORE_ERR_NETWORK)
        cc->network_errors++;
    pthread_cond_signal(&cc->cv);
    pthread_mutex_unlock(&cc->m);
}

Test(s3_client, every_queued_request_completes_through_one_slot)
{
    /* One slot, retries holding it through their backoff, three classes and
     * two owners: every request still completes, each exactly once. */
    enum { N = 40 };
    s3_client *c = client_on_closed_port(1);
    object_store *s = s3_client_store(c);
    completion_count cc = {.done = 0};
    pthread_mutex_init(&cc.m, NULL);
    pthread_cond_init(&cc.cv, NULL);
    static char buf[N][16];
    int owner_a, owner_b;
    for (int i = 0; i < N; i++) {
        struct iovec iov = {buf[i], sizeof buf[i]};
        store_request_opts o = {.priority = (store_priority)(i % STORE_PRIO_COUNT),
                                .owner = i % 2 ? (void *)&owner_a : (void *)&owner_b};
        cr_assert_eq(store_get_async(s, "k", NULL, 0, sizeof buf[i], &iov, 1, &o, count_done, &cc),
                     STORE_OK);
    }
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += 30;
    pthread_mutex_lock(&cc.m);
    while (cc.done < N && pthread_cond_timedwait(&cc.cv, &cc.m, &dl) == 0)
        ;
    unsigned done = cc.done, net = cc.network_errors;
    pthread_mutex_unlock(&cc.m);
    cr_assert_eq(done, N, "%u of %d completed within 30 s", done, N);
    cr_assert_eq(net, N);
    s3_client_destroy(c);
}

Test(s3_client, destroy_completes_queued_requests)
{
    enum { N = 200 };
    s3_client *c = client_on_closed_port(1);
    object_store *s = s3_client_store(c);
    completion_count cc = {.done = 0};
    pthread_mutex_init(&cc.m, NULL);
    pthread_cond_init(&cc.cv, NULL);
    static char buf[16];
    for (int i = 0; i < N; i++) {
        struct iovec iov = {buf, sizeof buf};
        cr_assert_eq(store_get_async(s, "k", NULL, 0, sizeof buf, &iov, 1, NULL, count_done, &cc),
                     STORE_OK);
    }
    s3_client_destroy(c);
    /* destroy returns after every done callback has run */
    cr_assert_eq(cc.done, N);
}

/* ---- order of service: a server that accepts and never answers ------------- */

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

enum { ORDER_N = 13 };

typedef struct {
    pthread_mutex_t m;
    pthread_cond_t cv;
    int order[ORDER_N]; /* guarded by m */
    unsigned done;      /* guarded by m */
} service_order;

typedef struct {
    service_order *so;
    int id;
} order_tag;

static void order_done(void *ud, store_status st, const char *errmsg)
{
    (void)st;
    (void)errmsg;
    order_tag *t = ud;
    pthread_mutex_lock(&t->so->m);
    if (t->so->done < ORDER_N)
        t->so->order[t->so->done] = t->id;
    t->so->done++;
    pthread_cond_signal(&t->so->cv);
    pthread_mutex_unlock(&t->so->m);
}

Test(s3_client, one_slot_serves_demand_then_plan_then_prefetch_and_owners_take_turns)
{
    /* The kernel completes connections into the backlog; nothing ever
     * answers, so every attempt ends at the first-byte deadline, one at a
     * time through one slot, in the order the scheduler picked them. */
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sa;
    cr_assert_eq(bind(lfd, (struct sockaddr *)&sa, sizeof sa), 0);
    cr_assert_eq(listen(lfd, 128), 0);
    cr_assert_eq(getsockname(lfd, (struct sockaddr *)&sa, &len), 0);
    char endpoint[64];
    snprintf(endpoint, sizeof endpoint, "http://127.0.0.1:%u", ntohs(sa.sin_port));

    static aws_credentials anon = {.anonymous = true, .region = "us-east-1", .source = "anonymous"};
    s3_client_config cfg = {
        .endpoint = endpoint,
        .bucket = "b",
        .creds = &anon,
        .max_connections = 1,
        .stall_timeout_ms = 100,
        .retry = {.max_attempts = 1, .base_ms = 1, .cap_ms = 1},
    };
    s3_client *c = NULL;
    sv_error err = {0};
    cr_assert_eq(s3_client_create(&cfg, &c, &err), STORE_OK, "%s", err.msg);
    object_store *s = s3_client_store(c);
    service_order so = {.done = 0};
    pthread_mutex_init(&so.m, NULL);
    pthread_cond_init(&so.cv, NULL);
    static char buf[16];
    int owner_a, owner_b;
    /* id: what was queued; the first takes the slot at once and holds it
     * for 100 ms, while the rest queue up behind it. */
    static const struct {
        int id;
        store_priority prio;
        int owner; /* 0 none, 1 a, 2 b */
    } plan[ORDER_N] = {
        {0, STORE_PRIO_PREFETCH, 0},                                  /* holds the slot */
        {1, STORE_PRIO_PREFETCH, 0}, {2, STORE_PRIO_PREFETCH, 0},     /* prefetch */
        {3, STORE_PRIO_PLAN, 1},     {4, STORE_PRIO_PLAN, 1},         /* planning */
        {5, STORE_PRIO_DEMAND, 1},   {6, STORE_PRIO_DEMAND, 1},       /* demand of a, */
        {7, STORE_PRIO_DEMAND, 1},   {8, STORE_PRIO_DEMAND, 1},
        {9, STORE_PRIO_DEMAND, 2},   {10, STORE_PRIO_DEMAND, 2},      /* then of b */
        {11, STORE_PRIO_PLAN, 2},    {12, STORE_PRIO_DEMAND, 0},
    };
    order_tag tags[ORDER_N];
    for (int i = 0; i < ORDER_N; i++) {
        tags[i] = (order_tag){&so, plan[i].id};
        struct iovec iov = {buf, sizeof buf};
        store_request_opts o = {.priority = plan[i].prio,
                                .owner = plan[i].owner == 1   ? (void *)&owner_a
                                         : plan[i].owner == 2 ? (void *)&owner_b
                                                              : NULL};
        cr_assert_eq(store_get_async(s, "k", NULL, 0, sizeof buf, &iov, 1, &o, order_done, &tags[i]),
                     STORE_OK);
        if (i == 0) {
            /* The first one has the slot once its connection is in the
             * backlog; only then do the others queue. */
            struct pollfd pfd = {.fd = lfd, .events = POLLIN};
            cr_assert_eq(poll(&pfd, 1, 5000), 1, "the first request never connected");
        }
    }
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += 30;
    pthread_mutex_lock(&so.m);
    while (so.done < ORDER_N && pthread_cond_timedwait(&so.cv, &so.m, &dl) == 0)
        ;
    unsigned done = so.done;
    pthread_mutex_unlock(&so.m);
    s3_client_destroy(c);
    close(lfd);
    cr_assert_eq(done, ORDER_N, "%u of %d completed within 30 s", done, ORDER_N);
    /* Demand first, owners a, b and none taking turns in the order they
     * first queued; then planning (a, b alternating); then prefetch. */
    static const int want[ORDER_N] = {0, 5, 9, 12, 6, 10, 7, 8, 3, 11, 4, 1, 2};
    for (int i = 0; i < ORDER_N; i++)
        cr_assert_eq(so.order[i], want[i], "completion %d: request %d, want %d", i, so.order[i],
                     want[i]);
}

Test(s3_client, a_retry_backing_off_keeps_its_slot)
{
    /* One slot. The first request stalls three times (first-byte deadline
     * 100 ms, backoffs up to 300 ms between); the second, queued behind it,
     * must not start during those backoffs, so it completes after the first. */
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sa;
    cr_assert_eq(bind(lfd, (struct sockaddr *)&sa, sizeof sa), 0);
    cr_assert_eq(listen(lfd, 128), 0);
    cr_assert_eq(getsockname(lfd, (struct sockaddr *)&sa, &len), 0);
    char endpoint[64];
    snprintf(endpoint, sizeof endpoint, "http://127.0.0.1:%u", ntohs(sa.sin_port));
    static aws_credentials anon = {.anonymous = true, .region = "us-east-1", .source = "anonymous"};
    s3_client_config cfg = {
        .endpoint = endpoint,
        .bucket = "b",
        .creds = &anon,
        .max_connections = 1,
        .stall_timeout_ms = 100,
        .retry = {.max_attempts = 3, .base_ms = 300, .cap_ms = 300},
    };
    s3_client *c = NULL;
    sv_error err = {0};
    cr_assert_eq(s3_client_create(&cfg, &c, &err), STORE_OK, "%s", err.msg);
    object_store *s = s3_client_store(c);
    service_order so = {.done = 0};
    pthread_mutex_init(&so.m, NULL);
    pthread_cond_init(&so.cv, NULL);
    static char buf[16];
    order_tag tags[2] = {{&so, 1}, {&so, 2}};
    struct iovec iov = {buf, sizeof buf};
    store_request_opts first = {.max_attempts = 3}, second = {.max_attempts = 1};
    cr_assert_eq(store_get_async(s, "k", NULL, 0, sizeof buf, &iov, 1, &first, order_done, &tags[0]),
                 STORE_OK);
    struct pollfd pfd = {.fd = lfd, .events = POLLIN};
    cr_assert_eq(poll(&pfd, 1, 5000), 1, "the first request never connected");
    cr_assert_eq(store_get_async(s, "k", NULL, 0, sizeof buf, &iov, 1, &second, order_done, &tags[1]),
                 STORE_OK);
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += 30;
    pthread_mutex_lock(&so.m);
    while (so.done < 2 && pthread_cond_timedwait(&so.cv, &so.m, &dl) == 0)
        ;
    unsigned done = so.done;
    int order0 = so.order[0], order1 = so.order[1];
    pthread_mutex_unlock(&so.m);
    s3_client_destroy(c);
    close(lfd);
    cr_assert_eq(done, 2);
    cr_assert_eq(order0, 1, "the queued request ran while the first one was backing off");
    cr_assert_eq(order1, 2);
}

/* ---- body deadlines: a server that sends the head and a few bytes, then nothing */

typedef struct {
    int lfd;
    int stop_pipe[2];
} stalling_server;

static void *stall_mid_body(void *arg)
{
    stalling_server *ss = arg;
    int fd = accept(ss->lfd, NULL, NULL);
    if (fd < 0)
        return NULL;
    char req[4096];
    ssize_t got = recv(fd, req, sizeof req, 0);
    (void)got;
    static const char head[] = "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-15/16\r\n"
                               "Content-Length: 16\r\n\r\nabcd";
    ssize_t sent = send(fd, head, sizeof head - 1, MSG_NOSIGNAL);
    (void)sent;
    struct pollfd pfd = {.fd = ss->stop_pipe[0], .events = POLLIN};
    poll(&pfd, 1, 10000); /* hold the connection open until the test ends */
    close(fd);
    return NULL;
}

Test(s3_client, a_body_that_stops_is_cut_off_by_the_progress_deadline)
{
    stalling_server ss;
    ss.lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sa;
    cr_assert_eq(bind(ss.lfd, (struct sockaddr *)&sa, sizeof sa), 0);
    cr_assert_eq(listen(ss.lfd, 8), 0);
    cr_assert_eq(getsockname(ss.lfd, (struct sockaddr *)&sa, &len), 0);
    cr_assert_eq(pipe(ss.stop_pipe), 0);
    pthread_t server;
    cr_assert_eq(pthread_create(&server, NULL, stall_mid_body, &ss), 0);
    char endpoint[64];
    snprintf(endpoint, sizeof endpoint, "http://127.0.0.1:%u", ntohs(sa.sin_port));
    static aws_credentials anon = {.anonymous = true, .region = "us-east-1", .source = "anonymous"};
    s3_client_config cfg = {
        .endpoint = endpoint,
        .bucket = "b",
        .creds = &anon,
        .max_connections = 4,
        .stall_timeout_ms = 5000, /* headers arrive at once: the body deadline must act */
        .progress_window_ms = 200,
        .retry = {.max_attempts = 1, .base_ms = 1, .cap_ms = 1},
    };
    s3_client *c = NULL;
    sv_error err = {0};
    cr_assert_eq(s3_client_create(&cfg, &c, &err), STORE_OK, "%s", err.msg);
    char buf[16];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    store_status st = store_get(s3_client_store(c), "k", NULL, 0, sizeof buf, buf, &err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double elapsed = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    s3_client_destroy(c);
    ssize_t w = write(ss.stop_pipe[1], "x", 1);
    (void)w;
    pthread_join(server, NULL);
    close(ss.lfd);
    close(ss.stop_pipe[0]);
    close(ss.stop_pipe[1]);
    cr_assert_eq(st, STORE_ERR_TIMEOUT, "%s: %s", store_status_name(st), err.msg);
    cr_assert(strstr(err.msg, "body stalled"), "%s", err.msg);
    cr_assert_lt(elapsed, 2.0, "cut off after %.2f s, window 0.2 s", elapsed);
}
