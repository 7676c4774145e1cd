#include "s3_request.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "http_range.h"
#include "s3_client.h"
#include "s3_listing.h"
#include "sv_grow.h"

#define EMPTY_PAYLOAD_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define ERROR_BODY_MAX (64u << 10) /* keep at most this much of an error response */

s3_request *s3_request_new(req_kind kind, const char *key)
{
    s3_request *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->kind = kind;
    r->key = strdup(key);
    if (!r->key) {
        free(r);
        return NULL;
    }
    return r;
}

void s3_request_free(s3_request *r)
{
    if (!r)
        return;
    if (r->easy)
        curl_easy_cleanup(r->easy);
    if (r->iov != r->iov_inline)
        free(r->iov);
    curl_slist_free_all(r->headers);
    free(r->url);
    free(r->key);
    free(r->body);
    free(r);
}

bool s3_request_set_iov(s3_request *r, const struct iovec *iov, size_t iovcnt)
{
    r->iov = r->iov_inline;
    if (iovcnt > S3_REQUEST_INLINE_IOV && !(r->iov = malloc(iovcnt * sizeof *iov))) {
        r->iov = r->iov_inline;
        return false;
    }
    memcpy(r->iov, iov, iovcnt * sizeof *iov);
    r->iovcnt = iovcnt;
    return true;
}

char *s3_object_url(const s3_endpoint *ep, const char *key)
{
    char *enc = s3_uri_encode(key, true);
    if (!enc)
        return NULL;
    size_t n = strlen(ep->base_url) + strlen(enc) + 2;
    char *url = malloc(n);
    if (url)
        snprintf(url, n, "%s/%s", ep->base_url, enc);
    free(enc);
    return url;
}

/* ---- curl callbacks (transfer thread) --------------------------------------- */

static bool body_append(s3_request *r, const char *data, size_t n)
{
    if (r->body_len + n > r->body_limit) {
        r->body_overflow = true;
        return false;
    }
    if (!sv_grow((void **)&r->body, &r->body_cap, r->body_len + n + 1, 1, 16384, r->body_limit + 1))
        return false;
    memcpy(r->body + r->body_len, data, n);
    r->body_len += n;
    r->body[r->body_len] = 0;
    return true;
}

static size_t on_header(char *buf, size_t size, size_t nitems, void *ud)
{
    s3_request *r = ud;
    size_t n = size * nitems;
    if (!r->got_headers) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        r->first_byte_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    }
    r->got_headers = true;
    if (n >= 5 && strncmp(buf, "HTTP/", 5) == 0) {
        /* A new response (e.g. after a redirect or 100-continue): reset. The
         * status is taken here so that the body callback need not ask curl
         * for it on every chunk. */
        const char *sp = memchr(buf, ' ', n);
        long status = 0;
        for (const char *p = sp ? sp + 1 : buf + n; p < buf + n && *p >= '0' && *p <= '9'; p++)
            status = status * 10 + (*p - '0');
        r->status = status;
        r->have_content_range = r->have_content_length = false;
        r->resp_etag[0] = 0;
        r->last_modified[0] = 0;
        return n;
    }
    const char *colon = memchr(buf, ':', n);
    if (!colon)
        return n;
    size_t name_len = (size_t)(colon - buf);
    const char *v = colon + 1;
    const char *end = buf + n;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t'))
        end--;
    size_t vlen = (size_t)(end - v);
#define HEADER_IS(name) (name_len == sizeof(name) - 1 && strncasecmp(buf, name, name_len) == 0)
    if (HEADER_IS("etag")) {
        if (vlen <= S3_ETAG_MAX) {
            memcpy(r->resp_etag, v, vlen);
            r->resp_etag[vlen] = 0;
        }
    } else if (HEADER_IS("content-range")) {
        if (vlen < sizeof r->content_range) {
            memcpy(r->content_range, v, vlen);
            r->content_range[vlen] = 0;
            r->have_content_range = true;
        }
    } else if (HEADER_IS("content-length")) {
        uint64_t x = 0;
        bool ok = vlen > 0 && vlen <= 19;
        for (size_t i = 0; ok && i < vlen; i++) {
            if (v[i] < '0' || v[i] > '9')
                ok = false;
            else
                x = x * 10 + (uint64_t)(v[i] - '0');
        }
        r->have_content_length = ok;
        r->content_length = ok ? x : 0;
    } else if (HEADER_IS("last-modified")) {
        if (vlen < sizeof r->last_modified) {
            memcpy(r->last_modified, v, vlen);
            r->last_modified[vlen] = 0;
        }
    }
#undef HEADER_IS
    return n;
}

static size_t abort_body(s3_request *r, const char *why)
{
    r->aborted_bad = true;
    snprintf(r->abort_reason, sizeof r->abort_reason, "%s", why);
    return CURL_WRITEFUNC_ERROR;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *ud)
{
    s3_request *r = ud;
    size_t n = size * nmemb;
    long status = r->status;
    r->body_bytes += n;
    if (r->kind != REQ_GET || status < 200 || status > 299) {
        /* Listings, and error documents of any request. */
        if (!body_append(r, data, n) && r->kind != REQ_GET && status >= 200 && status <= 299)
            return abort_body(r, "response body too large");
        return n; /* error bodies are kept truncated */
    }
    if (r->received + n > r->length)
        return abort_body(r, "server sent more bytes than the requested range");
    /* Scatter into the caller's buffers. */
    uint64_t pos = r->received;
    size_t done = 0;
    for (size_t i = 0; i < r->iovcnt && done < n; i++) {
        if (pos >= r->iov[i].iov_len) {
            pos -= r->iov[i].iov_len;
            continue;
        }
        size_t take = r->iov[i].iov_len - (size_t)pos;
        if (take > n - done)
            take = n - done;
        memcpy((char *)r->iov[i].iov_base + pos, data + done, take);
        done += take;
        pos = 0;
    }
    r->received += n;
    return n;
}

/* A PUT's body, from the start again on each attempt (and when curl
 * rewinds). */
static size_t on_upload(char *buf, size_t size, size_t nitems, void *ud)
{
    s3_request *r = ud;
    size_t n = size * nitems, left = r->put_len - r->put_sent;
    if (n > left)
        n = left;
    memcpy(buf, r->put_body + r->put_sent, n);
    r->put_sent += n;
    return n;
}

static int on_upload_seek(void *ud, curl_off_t offset, int origin)
{
    s3_request *r = ud;
    if (origin != SEEK_SET || offset < 0 || (uint64_t)offset > r->put_len)
        return CURL_SEEKFUNC_FAIL;
    r->put_sent = (size_t)offset;
    return CURL_SEEKFUNC_OK;
}

/* ---- attempt setup ------------------------------------------------------ */

bool s3_request_setup_attempt(const s3_endpoint *ep, s3_request *r, CURL *easy)
{
    r->easy = easy;
    curl_slist_free_all(r->headers);
    r->headers = NULL;
    r->received = 0;
    r->put_sent = 0;
    r->body_bytes = 0;
    r->first_byte_ns = 0;
    r->has_connection = false;
    r->body_len = 0;
    r->body_overflow = false;
    r->got_headers = false;
    r->aborted_bad = false;
    r->abort_reason[0] = 0;
    r->status = 0;
    r->have_content_range = r->have_content_length = false;
    r->resp_etag[0] = 0;
    r->last_modified[0] = 0;
    r->body_limit = r->kind == REQ_LIST ? S3_LISTING_MAX_XML : ERROR_BODY_MAX;

    CURL *e = r->easy;
    struct curl_slist *h = NULL;
    char line[S3_ETAG_MAX + 64];
    /* A PUT's body is not hashed into the signature: the page-map bundles it
     * writes carry their own CRC and are checked again when read. */
    h = curl_slist_append(h, r->kind == REQ_PUT ? "x-amz-content-sha256: UNSIGNED-PAYLOAD"
                                                : "x-amz-content-sha256: " EMPTY_PAYLOAD_SHA256);
    if (ep->token_header)
        h = curl_slist_append(h, ep->token_header);
    if (r->kind == REQ_GET) {
        snprintf(line, sizeof line, "Range: bytes=%" PRIu64 "-%" PRIu64, r->offset,
                 r->offset + r->length - 1);
        h = curl_slist_append(h, line);
        if (r->have_etag) {
            snprintf(line, sizeof line, "If-Match: %s", r->etag);
            h = curl_slist_append(h, line);
        }
    }
    if (!h)
        return false;
    r->headers = h;

    /* Per attempt: what differs between requests, each option set either
     * way, so that a reused handle carries nothing over from its last one. */
    curl_easy_setopt(e, CURLOPT_URL, r->url);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(e, CURLOPT_PRIVATE, r);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, r);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
    /* A large receive buffer means fewer write callbacks and syscalls on big
     * ranges; a small range gets curl's default, not 512 KiB it never fills. */
    long bufsize = 16L * 1024;
    if (r->kind == REQ_LIST)
        bufsize = 64L * 1024;
    else if (r->kind == REQ_GET && r->length > (uint64_t)bufsize)
        bufsize = r->length >= 512u * 1024 ? 512L * 1024 : (long)r->length;
    curl_easy_setopt(e, CURLOPT_BUFFERSIZE, bufsize);
    curl_easy_setopt(e, CURLOPT_READDATA, r);
    curl_easy_setopt(e, CURLOPT_SEEKDATA, r);
    if (r->kind == REQ_PUT) {
        curl_easy_setopt(e, CURLOPT_UPLOAD, 1L); /* also undoes a previous NOBODY */
        curl_easy_setopt(e, CURLOPT_INFILESIZE_LARGE, (curl_off_t)r->put_len);
    } else {
        curl_easy_setopt(e, CURLOPT_UPLOAD, 0L);
        if (r->kind == REQ_HEAD)
            curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
        else
            curl_easy_setopt(e, CURLOPT_HTTPGET, 1L); /* also undoes a previous NOBODY */
    }
    curl_easy_setopt(e, CURLOPT_FRESH_CONNECT, r->fresh_connection ? 1L : 0L);
    curl_easy_setopt(e, CURLOPT_FORBID_REUSE, r->fresh_connection ? 1L : 0L);
    return true;
}

void s3_easy_defaults(const s3_endpoint *ep, CURL *e)
{
    /* The same for every request: set once per handle, which is then reused
     * without curl_easy_reset (that would free and re-copy all of it). */
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_READFUNCTION, on_upload);
    curl_easy_setopt(e, CURLOPT_SEEKFUNCTION, on_upload_seek);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)ep->connect_timeout_ms);
    /* No LOW_SPEED limit: the client's first-byte and progress deadlines
     * judge slow responses (s3_client.c). */
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, NULL); /* never transform object bytes */
    if (ep->https) {
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
        if (ep->ca_bundle)
            curl_easy_setopt(e, CURLOPT_CAINFO, ep->ca_bundle);
    }
    if (ep->sigv4) {
        curl_easy_setopt(e, CURLOPT_AWS_SIGV4, ep->sigv4);
        curl_easy_setopt(e, CURLOPT_USERNAME, ep->user);
        curl_easy_setopt(e, CURLOPT_PASSWORD, ep->pass);
    }
}

/* ---- completion --------------------------------------------------------- */

attempt_outcome s3_outcome_from_curl(CURLcode rc)
{
    switch (rc) {
    case CURLE_OK: return ATTEMPT_OK;
    case CURLE_OPERATION_TIMEDOUT: return ATTEMPT_TIMEOUT;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY: return ATTEMPT_DNS;
    case CURLE_PARTIAL_FILE: return ATTEMPT_SHORT_BODY;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR: return ATTEMPT_TLS;
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_BAD_CONTENT_ENCODING: return ATTEMPT_BAD_RESPONSE;
    default: return ATTEMPT_CONN_RESET; /* connect refused, reset, recv/send errors, empty reply */
    }
}

store_status s3_status_from_outcome(attempt_outcome o)
{
    switch (o) {
    case ATTEMPT_TIMEOUT:
    case ATTEMPT_STALLED: return STORE_ERR_TIMEOUT;
    case ATTEMPT_DNS:
    case ATTEMPT_CONN_RESET: return STORE_ERR_NETWORK;
    case ATTEMPT_TLS: return STORE_ERR_TLS;
    case ATTEMPT_SHORT_BODY:
    case ATTEMPT_BAD_RESPONSE: return STORE_ERR_PROTOCOL;
    default: return STORE_ERR_HTTP;
    }
}

/* Map an HTTP error status (and the S3 error document) to a result. */
store_status s3_status_from_http(s3_request *r, char *msg, size_t msglen)
{
    char code[64] = "", message[160] = "";
    if (r->body_len)
        s3_error_parse(r->body, r->body_len, code, sizeof code, message, sizeof message);
    const char *what = r->kind == REQ_LIST ? "listing" : r->kind == REQ_HEAD ? "HEAD" : r->kind == REQ_PUT ? "PUT" : "GET";
    snprintf(msg, msglen, "%s %s: HTTP %ld%s%s%s%s", what, r->key, r->status, code[0] ? " " : "",
             code, message[0] ? ": " : "", message);
    switch (r->status) {
    case 404: return strcmp(code, "NoSuchBucket") == 0 ? STORE_ERR_NO_BUCKET : STORE_ERR_NOT_FOUND;
    case 401:
    case 403: return STORE_ERR_ACCESS;
    case 412:
    case 416: return STORE_ERR_CHANGED;
    default: return STORE_ERR_HTTP;
    }
}

/* Check a 2xx GET response against what was asked. Returns false with msg set
 * when the bytes cannot be trusted. */
bool s3_validate_get(s3_request *r, store_status *st, char *msg, size_t msglen)
{
    if (r->status == 206) {
        http_content_range cr;
        if (!r->have_content_range ||
            http_parse_content_range(r->content_range, strlen(r->content_range), &cr) != 0) {
            snprintf(msg, msglen, "GET %s: 206 without a valid Content-Range", r->key);
            *st = STORE_ERR_PROTOCOL;
            return false;
        }
        if (cr.first != r->offset || cr.last != r->offset + r->length - 1) {
            snprintf(msg, msglen,
                     "GET %s: asked for bytes %" PRIu64 "-%" PRIu64 ", server sent %" PRIu64
                     "-%" PRIu64,
                     r->key, r->offset, r->offset + r->length - 1, cr.first, cr.last);
            *st = STORE_ERR_PROTOCOL;
            return false;
        }
        if (r->object_size && cr.total != r->object_size) {
            if (cr.total == UINT64_MAX)
                snprintf(msg, msglen, "GET %s: Content-Range %s gives no total size (expected %" PRIu64 ")",
                         r->key, r->content_range, r->object_size);
            else
                snprintf(msg, msglen, "GET %s: Content-Range says the object has %" PRIu64
                         " bytes, its version has %" PRIu64, r->key, cr.total, r->object_size);
            *st = STORE_ERR_PROTOCOL;
            return false;
        }
    } else if (r->status == 200) {
        /* Server ignored Range: only acceptable if the whole object is the range. */
        if (r->offset != 0 || !r->have_content_length || r->content_length != r->length) {
            snprintf(msg, msglen, "GET %s: server ignored the Range header", r->key);
            *st = STORE_ERR_PROTOCOL;
            return false;
        }
        if (r->object_size && r->content_length != r->object_size) {
            snprintf(msg, msglen, "GET %s: a 200 of %" PRIu64 " bytes, its version has %" PRIu64, r->key,
                     r->content_length, r->object_size);
            *st = STORE_ERR_PROTOCOL;
            return false;
        }
    } else {
        snprintf(msg, msglen, "GET %s: unexpected HTTP %ld", r->key, r->status);
        *st = STORE_ERR_PROTOCOL;
        return false;
    }
    if (r->have_etag && r->resp_etag[0] && strcmp(r->resp_etag, r->etag) != 0) {
        snprintf(msg, msglen, "GET %s: ETag changed from %s to %s", r->key, r->etag, r->resp_etag);
        *st = STORE_ERR_CHANGED;
        return false;
    }
    if (r->received != r->length) {
        snprintf(msg, msglen, "GET %s: short body, %" PRIu64 " of %" PRIu64 " bytes", r->key,
                 r->received, r->length);
        *st = STORE_ERR_PROTOCOL;
        return false;
    }
    return true;
}

