/* ListObjectsV2 / <Error> parsing with libxml2, hardened for untrusted input:
 * no network, no DTDs or entity expansion, no XML_PARSE_HUGE, and every
 * count and length checked before it is allocated. */
#include "s3_listing.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sv_civil.h"

/* NOERROR/NOWARNING keep libxml2 from printing to stderr; errors are read
 * back from the parser context instead. NOENT, DTDLOAD and HUGE stay off. */
#define SIEVE_XML_OPTIONS (XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING)

/* URL-encoded keys (EncodingType=url) may be up to three times longer on the
 * wire than decoded. */
#define S3_KEY_WIRE_MAX (3u * S3_KEY_MAX)



/* ---- libxml2 setup ---------------------------------------------------- */

static pthread_once_t xml_init_once = PTHREAD_ONCE_INIT;

static void xml_init(void)
{
    /* libxml2 wants one initialisation before use from several threads. */
    xmlInitParser();
}

typedef struct {
    bool saw_doctype;
} parse_state;

/* SAX hook for "<!DOCTYPE": S3 never sends one, and a DTD is the only way to
 * declare the entities behind billion-laughs style documents, so stop at once. */
static void reject_doctype(void *ctx, const xmlChar *name, const xmlChar *external_id,
                           const xmlChar *system_id)
{
    (void)name;
    (void)external_id;
    (void)system_id;
    xmlParserCtxtPtr ctxt = ctx;
    parse_state *state = ctxt->_private;
    state->saw_doctype = true;
    xmlStopParser(ctxt);
}

static void discard_generic_error(void *ctx, const char *msg, ...)
{
    (void)ctx;
    (void)msg;
}

/* Replace anything that would break a one-line message: control bytes. */
static void sanitize_message(char *s)
{
    for (char *c = s; *c; c++) {
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = ' ';
    }
    /* libxml2 messages end in "\n": drop the trailing blanks it became. */
    for (size_t n = strlen(s); n > 0 && s[n - 1] == ' '; n--)
        s[n - 1] = '\0';
}

static s3_listing_err parse_document(const char *xml, size_t len, const char *what,
                                     xmlDocPtr *doc_out, sv_error *e)
{
    *doc_out = NULL;
    if (!xml || len == 0)
        return sv_fail(e, S3_LISTING_ERR_PARSE, 0, "%s: empty response body", what);
    if (len > S3_LISTING_MAX_XML)
        return sv_fail(e, S3_LISTING_ERR_LIMIT, 0, "%s: response of %zu bytes exceeds the %u byte limit",
                    what, len, S3_LISTING_MAX_XML);

    pthread_once(&xml_init_once, xml_init);
    xmlParserCtxtPtr ctxt = xmlNewParserCtxt();
    if (!ctxt || !ctxt->sax) {
        xmlFreeParserCtxt(ctxt);
        return sv_fail(e, S3_LISTING_ERR_NOMEM, 0, "%s: out of memory creating the XML parser", what);
    }
    parse_state state = { .saw_doctype = false };
    ctxt->_private = &state;
    ctxt->sax->internalSubset = reject_doctype;

    /* Some errors (encoding conversion) bypass XML_PARSE_NOERROR and go to the
     * thread's generic handler: silence it for this parse only. */
    const xmlGenericErrorFunc saved_handler = xmlGenericError;
    void *const saved_handler_ctx = xmlGenericErrorContext;
    xmlSetGenericErrorFunc(NULL, discard_generic_error);
    /* len <= S3_LISTING_MAX_XML, so the int conversion is exact. */
    xmlDocPtr doc = xmlCtxtReadMemory(ctxt, xml, (int)len, "s3-response.xml", NULL,
                                      SIEVE_XML_OPTIONS);
    xmlSetGenericErrorFunc(saved_handler_ctx, saved_handler);
    s3_listing_err rc = S3_LISTING_OK;
    if (state.saw_doctype || (doc && (doc->intSubset || doc->extSubset))) {
        rc = sv_fail(e, S3_LISTING_ERR_PARSE, 0, "%s: <!DOCTYPE> is not allowed in an S3 response", what);
    } else if (!doc || !ctxt->wellFormed) {
        const xmlError *xe = xmlCtxtGetLastError(ctxt);
        if (xe && xe->code == XML_ERR_NO_MEMORY) {
            rc = sv_fail(e, S3_LISTING_ERR_NOMEM, 0, "%s: out of memory parsing XML", what);
        } else {
            rc = sv_fail(e, S3_LISTING_ERR_PARSE, 0, "%s: malformed XML at line %d: %s", what,
                      xe ? xe->line : 0, xe && xe->message ? xe->message : "unknown error");
            if (e)
                sanitize_message(e->msg);
        }
    } else if (!xmlDocGetRootElement(doc)) {
        rc = sv_fail(e, S3_LISTING_ERR_PARSE, 0, "%s: document has no root element", what);
    }
    xmlFreeParserCtxt(ctxt);
    if (rc != S3_LISTING_OK) {
        xmlFreeDoc(doc);
        return rc;
    }
    *doc_out = doc;
    return S3_LISTING_OK;
}

/* ---- element helpers -------------------------------------------------- */

/* Elements are matched by local name so that documents with and without the
 * S3 namespace (and with a prefix) all work. */
static bool is_element(const xmlNode *n, const char *local_name)
{
    return n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, local_name) == 0;
}

typedef enum { TEXT_OK, TEXT_TOO_LONG, TEXT_NOT_TEXT, TEXT_NOMEM } text_status;

/* The element's character data (text and CDATA children, comments skipped),
 * at most max_len bytes. Element or entity children make it TEXT_NOT_TEXT. */
static text_status element_text(const xmlNode *el, size_t max_len, char **out, size_t *out_len)
{
    size_t total = 0;
    for (const xmlNode *c = el->children; c; c = c->next) {
        switch (c->type) {
        case XML_TEXT_NODE:
        case XML_CDATA_SECTION_NODE: {
            const size_t n = c->content ? strlen((const char *)c->content) : 0;
            if (n > max_len - total)
                return TEXT_TOO_LONG;
            total += n;
            break;
        }
        case XML_COMMENT_NODE:
        case XML_PI_NODE:
            break;
        default:
            return TEXT_NOT_TEXT;
        }
    }
    char *s = malloc(total + 1);
    if (!s)
        return TEXT_NOMEM;
    size_t at = 0;
    for (const xmlNode *c = el->children; c; c = c->next) {
        if ((c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) && c->content) {
            const size_t n = strlen((const char *)c->content);
            memcpy(s + at, c->content, n);
            at += n;
        }
    }
    s[at] = '\0';
    *out = s;
    if (out_len)
        *out_len = at;
    return TEXT_OK;
}

static bool is_xml_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Trim XML whitespace in place (for numbers, booleans and dates only: keys
 * may legitimately begin or end with spaces). */
static char *trim(char *s)
{
    while (is_xml_space(*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && is_xml_space(s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* Plain decimal digits only: no sign, no spaces inside, no overflow. */
static bool parse_u64(const char *s, uint64_t *out)
{
    if (!*s)
        return false;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return false;
        const uint64_t digit = (uint64_t)(*s - '0');
        if (v > (UINT64_MAX - digit) / 10)
            return false;
        v = v * 10 + digit;
    }
    *out = v;
    return true;
}

/* Whether s is well-formed UTF-8 (no overlongs, surrogates or > U+10FFFF). */
static bool valid_utf8(const unsigned char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        const unsigned char c = s[i];
        size_t extra;
        uint32_t cp;
        if (c < 0x80) {
            i++;
            continue;
        } else if (c >= 0xC2 && c <= 0xDF) {
            extra = 1;
            cp = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
            extra = 2;
            cp = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            extra = 3;
            cp = c & 0x07;
        } else {
            return false;
        }
        if (extra > len - i - 1)
            return false;
        for (size_t k = 1; k <= extra; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return false;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if ((extra == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
            (extra == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
            return false;
        i += extra + 1;
    }
    return true;
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Undo S3's EncodingType=url form encoding in place ('+' is a space, %XX a
 * byte). Fails on a malformed escape or an encoded NUL. */
static bool url_decode_in_place(char *s, size_t *len)
{
    size_t out = 0;
    for (size_t i = 0; i < *len; i++) {
        if (s[i] == '+') {
            s[out++] = ' ';
        } else if (s[i] == '%') {
            if (*len - i < 3)
                return false;
            const int hi = hex_value(s[i + 1]), lo = hex_value(s[i + 2]);
            if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
                return false;
            s[out++] = (char)(hi * 16 + lo);
            i += 2;
        } else {
            s[out++] = s[i];
        }
    }
    s[out] = '\0';
    *len = out;
    return true;
}

/* A short, printable rendering of an untrusted key for error messages. */
static const char *describe(const char *s, char *buf, size_t buflen)
{
    if (!s)
        return "?";
    size_t i = 0;
    for (; s[i] && i + 1 < buflen; i++)
        buf[i] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ? '?' : s[i];
    buf[i] = '\0';
    return buf;
}

/* ---- ListObjectsV2 ---------------------------------------------------- */

typedef struct {
    bool url_encoded; /* <EncodingType>url</EncodingType> */
    sv_error *e;
} listing_ctx;

/* Extract and validate a key or prefix (1..S3_KEY_MAX bytes after decoding). */
static s3_listing_err take_key(const listing_ctx *lc, const xmlNode *el, const char *what,
                               size_t index, char **out)
{
    char *s = NULL;
    size_t len = 0;
    switch (element_text(el, lc->url_encoded ? S3_KEY_WIRE_MAX : S3_KEY_MAX, &s, &len)) {
    case TEXT_OK:
        break;
    case TEXT_TOO_LONG:
        return sv_fail(lc->e, S3_LISTING_ERR_LIMIT, 0, "%s %zu: longer than %u bytes", what, index,
                    S3_KEY_MAX);
    case TEXT_NOT_TEXT:
        return sv_fail(lc->e, S3_LISTING_ERR_INVALID, 0, "%s %zu: contains markup, not text", what,
                    index);
    case TEXT_NOMEM:
        return sv_fail(lc->e, S3_LISTING_ERR_NOMEM, 0, "%s %zu: out of memory", what, index);
    }
    if (lc->url_encoded) {
        if (!url_decode_in_place(s, &len) || !valid_utf8((const unsigned char *)s, len)) {
            free(s);
            return sv_fail(lc->e, S3_LISTING_ERR_INVALID, 0,
                        "%s %zu: bad URL encoding (EncodingType=url)", what, index);
        }
    }
    if (len == 0) {
        free(s);
        return sv_fail(lc->e, S3_LISTING_ERR_INVALID, 0, "%s %zu: empty", what, index);
    }
    if (len > S3_KEY_MAX) {
        free(s);
        return sv_fail(lc->e, S3_LISTING_ERR_LIMIT, 0, "%s %zu: longer than %u bytes", what, index,
                    S3_KEY_MAX);
    }
    *out = s;
    return S3_LISTING_OK;
}

/* Text of a scalar field, whitespace-trimmed, into a caller-provided buffer:
 * numbers, booleans and dates are short, anything longer is invalid. */
static s3_listing_err take_scalar(const listing_ctx *lc, const xmlNode *el, const char *what,
                                  char *buf, size_t buflen)
{
    char *s = NULL;
    switch (element_text(el, 256, &s, NULL)) {
    case TEXT_OK:
        break;
    case TEXT_TOO_LONG:
    case TEXT_NOT_TEXT:
        return sv_fail(lc->e, S3_LISTING_ERR_INVALID, 0, "%s: not a plain value", what);
    case TEXT_NOMEM:
        return sv_fail(lc->e, S3_LISTING_ERR_NOMEM, 0, "%s: out of memory", what);
    }
    const char *t = trim(s);
    const size_t n = strlen(t);
    if (n >= buflen) {
        free(s);
        return sv_fail(lc->e, S3_LISTING_ERR_INVALID, 0, "%s: value too long", what);
    }
    memcpy(buf, t, n + 1);
    free(s);
    return S3_LISTING_OK;
}

static s3_listing_err parse_object(const listing_ctx *lc, const xmlNode *contents, size_t index,
                                   store_object_entry *obj)
{
    const xmlNode *key_el = NULL, *size_el = NULL, *etag_el = NULL, *mtime_el = NULL;
    for (const xmlNode *c = contents->children; c; c = c->next) {
        const xmlNode **slot = is_element(c, "Key")            ? &key_el
                               : is_element(c, "Size")         ? &size_el
                               : is_element(c, "ETag")         ? &etag_el
                               : is_element(c, "LastModified") ? &mtime_el
                                                               : NULL;
        if (!slot)
            continue; /* StorageClass, Owner, ChecksumAlgorithm, ...: not needed */
        if (*slot)
            return sv_fail(lc->e, S3_LISTING_ERR_INVALID, 0, "object %zu: duplicate <%s>", index,
                        (const char *)c->name);
        *slot = c;
    }
    if (!key_el)
        return sv_fail(lc->e, S3_LISTING_ERR_INVALID, 0, "object %zu: missing <Key>", index);
    s3_listing_err rc = take_key(lc, key_el, "object key", index, &obj->key);
    if (rc != S3_LISTING_OK)
        return rc;

    char shown[65];
    describe(obj->key, shown, sizeof shown);
    char scalar[64];
    if (!size_el)
        return sv_fail(lc->e, S3_LISTING_ERR_INVALID, 0, "object '%s': missing <Size>", shown);
    rc = take_scalar(lc, size_el, "object <Size>", scalar, sizeof scalar);
    if (rc != S3_LISTING_OK)
        return rc;
    if (!parse_u64(scalar, &obj->size))
        return sv_fail(lc->e, S3_LISTING_ERR_INVALID, 0,
                    "object '%s': <Size> is not a decimal number fitting 64 bits", shown);

    if (!mtime_el)
        return sv_fail(lc->e, S3_LISTING_ERR_INVALID, 0, "object '%s': missing <LastModified>", shown);
    rc = take_scalar(lc, mtime_el, "object <LastModified>", scalar, sizeof scalar);
    if (rc != S3_LISTING_OK)
        return rc;
    if (s3_parse_iso8601(scalar, &obj->mtime) != 0)
        return sv_fail(lc->e, S3_LISTING_ERR_INVALID, 0,
                    "object '%s': <LastModified> is not an ISO 8601 UTC time", shown);

    /* ETag is kept byte-for-byte (quotes included) for If-Match; a server
     * that omits it yields "" so callers never see NULL. */
    if (etag_el) {
        switch (element_text(etag_el, S3_ETAG_MAX, &obj->etag, NULL)) {
        case TEXT_OK:
            break;
        case TEXT_TOO_LONG:
            return sv_fail(lc->e, S3_LISTING_ERR_LIMIT, 0, "object '%s': <ETag> longer than %u bytes",
                        shown, S3_ETAG_MAX);
        case TEXT_NOT_TEXT:
            return sv_fail(lc->e, S3_LISTING_ERR_INVALID, 0, "object '%s': <ETag> contains markup",
                        shown);
        case TEXT_NOMEM:
            return sv_fail(lc->e, S3_LISTING_ERR_NOMEM, 0, "object '%s': out of memory", shown);
        }
    } else {
        obj->etag = strdup("");
        if (!obj->etag)
            return sv_fail(lc->e, S3_LISTING_ERR_NOMEM, 0, "object '%s': out of memory", shown);
    }
    return S3_LISTING_OK;
}

static s3_listing_err parse_common_prefix(const listing_ctx *lc, const xmlNode *cp, size_t index,
                                          char **out)
{
    const xmlNode *prefix_el = NULL;
    for (const xmlNode *c = cp->children; c; c = c->next) {
        if (!is_element(c, "Prefix"))
            continue;
        if (prefix_el)
            return sv_fail(lc->e, S3_LISTING_ERR_INVALID, 0, "common prefix %zu: duplicate <Prefix>",
                        index);
        prefix_el = c;
    }
    if (!prefix_el)
        return sv_fail(lc->e, S3_LISTING_ERR_INVALID, 0, "common prefix %zu: missing <Prefix>", index);
    return take_key(lc, prefix_el, "common prefix", index, out);
}

/* Top-level children that may appear at most once. */
typedef struct {
    const xmlNode *is_truncated, *next_token, *key_count, *encoding_type;
} listing_fields;

static s3_listing_err collect_fields(const listing_ctx *lc, const xmlNode *root,
                                     listing_fields *f, size_t *n_objects, size_t *n_prefixes)
{
    *n_objects = *n_prefixes = 0;
    for (const xmlNode *c = root->children; c; c = c->next) {
        if (is_element(c, "Contents")) {
            ++*n_objects;
        } else if (is_element(c, "CommonPrefixes")) {
            ++*n_prefixes;
        } else {
            const xmlNode **slot = is_element(c, "IsTruncated")             ? &f->is_truncated
                                   : is_element(c, "NextContinuationToken") ? &f->next_token
                                   : is_element(c, "KeyCount")              ? &f->key_count
                                   : is_element(c, "EncodingType")          ? &f->encoding_type
                                                                            : NULL;
            if (!slot)
                continue; /* Name, Prefix, Delimiter, MaxKeys, StartAfter, ... */
            if (*slot)
                return sv_fail(lc->e, S3_LISTING_ERR_INVALID, 0, "ListBucketResult: duplicate <%s>",
                            (const char *)c->name);
            *slot = c;
        }
        /* Checked while counting so a huge page is refused before allocation. */
        if (*n_objects + *n_prefixes > S3_LISTING_MAX_ENTRIES)
            return sv_fail(lc->e, S3_LISTING_ERR_LIMIT, 0,
                        "ListBucketResult: more than %u objects and prefixes in one page",
                        S3_LISTING_MAX_ENTRIES);
    }
    return S3_LISTING_OK;
}

static s3_listing_err parse_listing_root(listing_ctx *lc, const xmlNode *root, store_listing *l)
{
    listing_fields f = { 0 };
    size_t n_objects, n_prefixes;
    s3_listing_err rc = collect_fields(lc, root, &f, &n_objects, &n_prefixes);
    if (rc != S3_LISTING_OK)
        return rc;

    char scalar[64];
    if (f.encoding_type) {
        rc = take_scalar(lc, f.encoding_type, "<EncodingType>", scalar, sizeof scalar);
        if (rc != S3_LISTING_OK)
            return rc;
        /* Empty: the keys are as they are. Versity's gateway (1.8) always
         * sends the element, empty, and never encodes. */
        if (scalar[0] && strcmp(scalar, "url") != 0)
            return sv_fail(lc->e, S3_LISTING_ERR_INVALID, 0, "ListBucketResult: unknown <EncodingType>");
        lc->url_encoded = scalar[0] != 0;
    }
    if (f.is_truncated) {
        rc = take_scalar(lc, f.is_truncated, "<IsTruncated>", scalar, sizeof scalar);
        if (rc != S3_LISTING_OK)
            return rc;
        if (strcmp(scalar, "true") == 0)
            l->truncated = true;
        else if (strcmp(scalar, "false") != 0)
            return sv_fail(lc->e, S3_LISTING_ERR_INVALID, 0,
                        "ListBucketResult: <IsTruncated> is neither true nor false");
    }
    if (f.key_count) {
        rc = take_scalar(lc, f.key_count, "<KeyCount>", scalar, sizeof scalar);
        if (rc != S3_LISTING_OK)
            return rc;
        uint64_t count;
        if (!parse_u64(scalar, &count) || count > UINT32_MAX)
            return sv_fail(lc->e, S3_LISTING_ERR_INVALID, 0,
                        "ListBucketResult: <KeyCount> is not a decimal number fitting 32 bits");
        l->key_count = (uint32_t)count;
    }
    if (f.next_token) {
        size_t len = 0;
        switch (element_text(f.next_token, S3_TOKEN_MAX, &l->next_token, &len)) {
        case TEXT_OK:
            break;
        case TEXT_TOO_LONG:
            return sv_fail(lc->e, S3_LISTING_ERR_LIMIT, 0,
                        "ListBucketResult: <NextContinuationToken> longer than %u bytes",
                        S3_TOKEN_MAX);
        case TEXT_NOT_TEXT:
            return sv_fail(lc->e, S3_LISTING_ERR_INVALID, 0,
                        "ListBucketResult: <NextContinuationToken> contains markup");
        case TEXT_NOMEM:
            return sv_fail(lc->e, S3_LISTING_ERR_NOMEM, 0, "ListBucketResult: out of memory");
        }
        if (len == 0) {
            free(l->next_token); /* an empty token is no token */
            l->next_token = NULL;
        }
    }
    if (l->truncated && !l->next_token)
        return sv_fail(lc->e, S3_LISTING_ERR_INVALID, 0,
                    "ListBucketResult: truncated page without a <NextContinuationToken>");

    /* calloc so that a failure halfway leaves only NULLs for free() to skip. */
    if (n_objects > 0) {
        l->objects = calloc(n_objects, sizeof *l->objects);
        if (!l->objects)
            return sv_fail(lc->e, S3_LISTING_ERR_NOMEM, 0, "ListBucketResult: out of memory");
    }
    if (n_prefixes > 0) {
        l->prefixes = calloc(n_prefixes, sizeof *l->prefixes);
        if (!l->prefixes)
            return sv_fail(lc->e, S3_LISTING_ERR_NOMEM, 0, "ListBucketResult: out of memory");
    }
    for (const xmlNode *c = root->children; c; c = c->next) {
        if (is_element(c, "Contents")) {
            rc = parse_object(lc, c, l->n_objects, &l->objects[l->n_objects]);
            l->n_objects++; /* counted even on failure so free releases partial fields */
        } else if (is_element(c, "CommonPrefixes")) {
            rc = parse_common_prefix(lc, c, l->n_prefixes, &l->prefixes[l->n_prefixes]);
            l->n_prefixes++;
        }
        if (rc != S3_LISTING_OK)
            return rc;
    }
    return S3_LISTING_OK;
}

/* Code of an <Error> root, for messages; "" when absent. */
static void error_code_of(const xmlNode *root, char *buf, size_t buflen);

s3_listing_err s3_listing_parse(const char *xml, size_t len, store_listing *out, sv_error *err)
{
    sv_error *e = err;
    sv_error_clear(err);
    if (!out)
        return sv_fail(e, S3_LISTING_ERR_INVALID, 0, "ListBucketResult: no output given");
    memset(out, 0, sizeof *out);

    xmlDocPtr doc = NULL;
    s3_listing_err rc = parse_document(xml, len, "ListBucketResult", &doc, e);
    if (rc != S3_LISTING_OK)
        return rc;
    const xmlNode *root = xmlDocGetRootElement(doc);
    if (is_element(root, "Error")) {
        char code[64];
        error_code_of(root, code, sizeof code);
        rc = sv_fail(e, S3_LISTING_ERR_PARSE, 0, "ListBucketResult: the response is an S3 error (%s)",
                  code[0] ? code : "no code");
    } else if (!is_element(root, "ListBucketResult")) {
        char shown[65];
        rc = sv_fail(e, S3_LISTING_ERR_PARSE, 0, "ListBucketResult: unexpected root element <%s>",
                  describe((const char *)root->name, shown, sizeof shown));
    } else {
        listing_ctx lc = { .url_encoded = false, .e = e };
        rc = parse_listing_root(&lc, root, out);
        if (rc != S3_LISTING_OK)
            store_listing_free(out);
    }
    xmlFreeDoc(doc);
    return rc;
}

/* ---- <Error> ---------------------------------------------------------- */

/* Length of the UTF-8 sequence starting with lead byte c (1 for stray bytes). */
static size_t utf8_seq_len(unsigned char c)
{
    if (c >= 0xF0 && c <= 0xF4)
        return 4;
    if (c >= 0xE0)
        return c <= 0xEF ? 3 : 1;
    if (c >= 0xC2)
        return 2;
    return 1;
}

/* Copy src into dst (always NUL-terminated), replacing C0/C1 control
 * characters with '?' and never cutting a UTF-8 sequence in half. */
static void copy_sanitized(char *dst, size_t dstlen, const char *src)
{
    if (!dst || dstlen == 0)
        return;
    size_t out = 0;
    const unsigned char *s = (const unsigned char *)(src ? src : "");
    while (*s) {
        size_t n = utf8_seq_len(*s);
        for (size_t k = 1; k < n; k++) {
            if (s[k] == '\0') { /* truncated sequence: emit the lead byte alone */
                n = 1;
                break;
            }
        }
        const bool control = (n == 1 && (*s < 0x20 || *s == 0x7f)) ||
                             (n == 2 && *s == 0xC2 && s[1] >= 0x80 && s[1] <= 0x9F);
        const size_t emit = control ? 1 : n;
        if (emit > dstlen - 1 - out)
            break;
        if (control) {
            dst[out++] = '?';
        } else {
            memcpy(dst + out, s, n);
            out += n;
        }
        s += n;
    }
    dst[out] = '\0';
}

/* First <name> child's character data, or NULL. Markup inside is ignored. */
static char *child_text(const xmlNode *parent, const char *name)
{
    for (const xmlNode *c = parent->children; c; c = c->next) {
        if (!is_element(c, name))
            continue;
        char *s = NULL;
        /* The document is already capped at S3_LISTING_MAX_XML bytes. */
        return element_text(c, S3_LISTING_MAX_XML, &s, NULL) == TEXT_OK ? s : NULL;
    }
    return NULL;
}

static void error_code_of(const xmlNode *root, char *buf, size_t buflen)
{
    char *code = child_text(root, "Code");
    copy_sanitized(buf, buflen, code);
    free(code);
}

s3_listing_err s3_error_parse(const char *xml, size_t len, char *code, size_t codelen,
                              char *message, size_t messagelen)
{
    copy_sanitized(code, codelen, "");
    copy_sanitized(message, messagelen, "");
    xmlDocPtr doc = NULL;
    sv_error *const no_message = NULL;
    if (parse_document(xml, len, "Error", &doc, no_message) != S3_LISTING_OK)
        return S3_LISTING_ERR_PARSE;
    const xmlNode *root = xmlDocGetRootElement(doc);
    s3_listing_err rc = S3_LISTING_ERR_PARSE;
    if (is_element(root, "Error")) {
        error_code_of(root, code, codelen);
        char *text = child_text(root, "Message");
        copy_sanitized(message, messagelen, text);
        free(text);
        rc = S3_LISTING_OK;
    }
    xmlFreeDoc(doc);
    return rc;
}

/* ---- timestamps ------------------------------------------------------- */

/* Exactly `count` decimal digits. */
static bool take_digits(const char **s, int count, int *out)
{
    int v = 0;
    for (int i = 0; i < count; i++) {
        const char c = (*s)[i];
        if (c < '0' || c > '9')
            return false;
        v = v * 10 + (c - '0');
    }
    *s += count;
    *out = v;
    return true;
}

static bool take(const char **s, char c)
{
    if (**s != c)
        return false;
    (*s)++;
    return true;
}

int s3_parse_iso8601(const char *s, int64_t *out)
{
    if (!s || !out)
        return -1;
    int year, month, day, hour, minute, second;
    if (!take_digits(&s, 4, &year) || !take(&s, '-') || !take_digits(&s, 2, &month) ||
        !take(&s, '-') || !take_digits(&s, 2, &day))
        return -1;
    if (!take(&s, 'T') && !take(&s, 't'))
        return -1;
    if (!take_digits(&s, 2, &hour) || !take(&s, ':') || !take_digits(&s, 2, &minute) ||
        !take(&s, ':') || !take_digits(&s, 2, &second))
        return -1;
    if (!sv_civil_valid(year, month, day) || hour > 23 || minute > 59 ||
        second > 60) /* 60: a leap second, counted as the next minute's 0 */
        return -1;
    if (take(&s, '.')) {
        if (*s < '0' || *s > '9')
            return -1;
        while (*s >= '0' && *s <= '9')
            s++; /* sub-second precision is dropped */
    }
    int offset_seconds = 0;
    if (!take(&s, 'Z') && !take(&s, 'z')) {
        const char sign = *s;
        if (sign != '+' && sign != '-')
            return -1;
        s++;
        int off_h, off_m;
        if (!take_digits(&s, 2, &off_h) || !take(&s, ':') || !take_digits(&s, 2, &off_m) ||
            off_h > 23 || off_m > 59)
            return -1;
        offset_seconds = (off_h * 60 + off_m) * 60 * (sign == '+' ? 1 : -1);
    }
    if (*s != '\0')
        return -1;
    *out = sv_days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second -
           offset_seconds;
    return 0;
}
