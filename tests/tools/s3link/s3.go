package main

// The S3 API subset: path-style addressing only.
//
//   GET/HEAD /BUCKET/KEY      objects: Range, If-Match, If-None-Match,
//                             If-(Un)Modified-Since
//   PUT /BUCKET/KEY           store an object (test set-up)
//   DELETE /BUCKET/KEY
//   GET /BUCKET?list-type=2   ListObjectsV2 (and V1 without list-type)
//   GET /BUCKET?location, HEAD /BUCKET, PUT /BUCKET, GET / (ListBuckets)
//   /__s3link/stats, /__s3link/reset, /__s3link/config: control requests,
//   outside the link emulation and the rate limit, not counted.
//
// Anything else: 501 NotImplemented. Authorization is accepted whatever it
// says (or when missing).

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

type server struct {
	st     *store
	stats  *stats
	em     *emulator // nil: pass-through (lan)
	region string
	getRL  atomic.Pointer[limiter]
	putRL  atomic.Pointer[limiter]
	reqSeq atomic.Uint64
	hostID []string
	link   map[string]interface{}
}

var (
	hdrBytes    = []string{"bytes"}
	hdrOctet    = []string{"binary/octet-stream"}
	hdrXML      = []string{"application/xml"}
	hdrServer   = []string{"AmazonS3"}
	hdrZero     = []string{"0"}
	hdrStandard = []string{"STANDARD"}
)

func (s *server) requestID() string {
	return fmt.Sprintf("%016X", s.reqSeq.Add(1))
}

// serve answers one request; lc is its connection when the link is
// emulated (nil: pass-through).
func (s *server) serve(w http.ResponseWriter, r *http.Request, lc *linkConn) {
	path := r.URL.Path
	if strings.HasPrefix(path, "/__s3link/") {
		if lc != nil {
			lc.beginControl()
		}
		s.control(w, r)
		return
	}
	if lc != nil {
		lc.beginRequest()
		if r.Method == http.MethodPut && r.Body != nil && r.Body != http.NoBody && s.em.upNsPerByte > 0 {
			r.Body = &pacedBody{ReadCloser: r.Body, c: lc}
		}
	}
	h := w.Header()
	h["Server"] = hdrServer
	h["x-amz-request-id"] = []string{s.requestID()}
	h["x-amz-id-2"] = s.hostID
	if path == "" || path[0] != '/' {
		s.fail(w, r, kindOther, 400, "InvalidURI", "Couldn't parse the specified URI.", nil)
		return
	}
	rest := path[1:]
	if rest == "" {
		if r.Method == http.MethodGet {
			s.listBuckets(w, r)
			return
		}
		s.notImplemented(w, r, kindOther)
		return
	}
	bucket, key := rest, ""
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		bucket, key = rest[:i], rest[i+1:]
	}
	if key == "" {
		s.bucketOp(w, r, bucket)
		return
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		kind := kindGet
		if r.Method == http.MethodHead {
			kind = kindHead
		}
		if r.URL.RawQuery != "" && hasUnsupportedObjectQuery(r.URL.RawQuery) {
			s.notImplemented(w, r, kind)
			return
		}
		s.getObject(w, r, bucket, key, rest, kind)
	case http.MethodPut:
		if r.URL.RawQuery != "" && hasUnsupportedObjectQuery(r.URL.RawQuery) ||
			r.Header.Get("x-amz-copy-source") != "" {
			s.notImplemented(w, r, kindPut)
			return
		}
		s.putObject(w, r, bucket, key, rest)
	case http.MethodDelete:
		if r.URL.RawQuery != "" && hasUnsupportedObjectQuery(r.URL.RawQuery) {
			s.notImplemented(w, r, kindOther)
			return
		}
		s.deleteObject(w, r, bucket, key, rest)
	default:
		s.notImplemented(w, r, kindOther)
	}
}

// hasUnsupportedObjectQuery: sub-resources and parameters of object requests
// this server does not implement (x-id=GetObject and response-* overrides
// are ignored, as harmless).
func hasUnsupportedObjectQuery(raw string) bool {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return true
	}
	for k := range q {
		switch {
		case k == "x-id", strings.HasPrefix(k, "X-Amz-"), strings.HasPrefix(k, "x-amz-"),
			strings.HasPrefix(k, "response-"):
		default:
			return true
		}
	}
	return false
}

// parentPrefix: the rate-limit prefix of a path "BUCKET/KEY": up to and
// including its last '/'.
func parentPrefix(rel string) string {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i+1]
	}
	return rel
}

func (s *server) allow(kind reqKind, prefix string) bool {
	l := s.getRL.Load()
	if kind == kindPut || kind == kindList || kind == kindOther {
		l = s.putRL.Load()
	}
	return l.allow(prefix, monoNow())
}

func (s *server) writeHeader(w http.ResponseWriter, code int) {
	s.stats.countStatus(code)
	w.WriteHeader(code)
}

// fail writes S3's error document (no body for HEAD).
func (s *server) fail(w http.ResponseWriter, r *http.Request, kind reqKind, code int, errCode, msg string,
	extra [][2]string) {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n<Error><Code>")
	b.WriteString(errCode)
	b.WriteString("</Code><Message>")
	xmlEscape(&b, msg)
	b.WriteString("</Message>")
	for _, kv := range extra {
		b.WriteString("<" + kv[0] + ">")
		xmlEscape(&b, kv[1])
		b.WriteString("</" + kv[0] + ">")
	}
	b.WriteString("<Resource>")
	xmlEscape(&b, r.URL.Path)
	b.WriteString("</Resource><RequestId>")
	if id := w.Header()["x-amz-request-id"]; len(id) > 0 {
		b.WriteString(id[0])
	}
	b.WriteString("</RequestId><HostId>")
	b.WriteString(s.hostID[0])
	b.WriteString("</HostId></Error>")
	h := w.Header()
	h["Content-Type"] = hdrXML
	if r.Method == http.MethodHead {
		h["Content-Length"] = hdrZero
		s.writeHeader(w, code)
		return
	}
	h["Content-Length"] = []string{strconv.Itoa(b.Len())}
	s.writeHeader(w, code)
	w.Write(b.Bytes())
}

func (s *server) notImplemented(w http.ResponseWriter, r *http.Request, kind reqKind) {
	s.stats.requests[kind].Add(1)
	s.fail(w, r, kind, 501, "NotImplemented",
		"A header you provided implies functionality that is not implemented", nil)
}

func (s *server) slowDown(w http.ResponseWriter, r *http.Request, kind reqKind) {
	s.stats.slowdowns.Add(1)
	s.fail(w, r, kind, 503, "SlowDown", "Please reduce your request rate.", nil)
}

func (s *server) noSuchBucket(w http.ResponseWriter, r *http.Request, kind reqKind, bucket string) {
	s.fail(w, r, kind, 404, "NoSuchBucket", "The specified bucket does not exist",
		[][2]string{{"BucketName", bucket}})
}

// ---- objects -------------------------------------------------------------

// byteRange: parse a single "bytes=" range against size. ok=false: no
// usable Range header (serve the whole object, as S3 does for syntax it
// ignores); unsat: 416.
func byteRange(hdr string, size int64) (start, end int64, ok, unsat bool) {
	const p = "bytes="
	if len(hdr) <= len(p) || !strings.EqualFold(hdr[:len(p)], p) {
		return 0, 0, false, false
	}
	spec := strings.TrimSpace(hdr[len(p):])
	if strings.IndexByte(spec, ',') >= 0 {
		return 0, 0, false, false
	}
	i := strings.IndexByte(spec, '-')
	if i < 0 {
		return 0, 0, false, false
	}
	a, b := strings.TrimSpace(spec[:i]), strings.TrimSpace(spec[i+1:])
	if a == "" {
		n, err := strconv.ParseInt(b, 10, 64)
		if err != nil || n < 0 {
			return 0, 0, false, false
		}
		if n == 0 || size == 0 {
			return 0, 0, true, true
		}
		if n > size {
			n = size
		}
		return size - n, size - 1, true, false
	}
	s, err := strconv.ParseInt(a, 10, 64)
	if err != nil || s < 0 {
		return 0, 0, false, false
	}
	e := size - 1
	if b != "" {
		e, err = strconv.ParseInt(b, 10, 64)
		if err != nil || e < s {
			return 0, 0, false, false
		}
		if e > size-1 {
			e = size - 1
		}
	}
	if s >= size {
		return 0, 0, true, true
	}
	return s, e, true, false
}

// etagMatches: does an If-Match / If-None-Match list name etag (quoted)?
func etagMatches(list, etag string) bool {
	for _, t := range strings.Split(list, ",") {
		t = strings.TrimSpace(t)
		t = strings.TrimPrefix(t, "W/")
		if t == "*" || t == etag || `"`+t+`"` == etag {
			return true
		}
	}
	return false
}

func (s *server) getObject(w http.ResponseWriter, r *http.Request, bucket, key, rel string, kind reqKind) {
	s.stats.requests[kind].Add(1)
	if !s.allow(kind, parentPrefix(rel)) {
		s.slowDown(w, r, kind)
		return
	}
	if !validKey(key) {
		if !s.st.bucketExists(bucket) {
			s.noSuchBucket(w, r, kind, bucket)
			return
		}
		s.fail(w, r, kind, 404, "NoSuchKey", "The specified key does not exist.", [][2]string{{"Key", key}})
		return
	}
	f, err := s.st.acquire(bucket, rel)
	if err != nil {
		if err == errNoBucket {
			s.noSuchBucket(w, r, kind, bucket)
		} else {
			s.fail(w, r, kind, 404, "NoSuchKey", "The specified key does not exist.", [][2]string{{"Key", key}})
		}
		return
	}
	defer s.st.release(f)
	h := w.Header()
	// Preconditions (RFC 7232 order, as S3).
	if im := r.Header.Get("If-Match"); im != "" {
		if !etagMatches(im, f.etag) {
			s.fail(w, r, kind, 412, "PreconditionFailed",
				"At least one of the pre-conditions you specified did not hold", [][2]string{{"Condition", "If-Match"}})
			return
		}
	} else if ius := r.Header.Get("If-Unmodified-Since"); ius != "" {
		if t, err := http.ParseTime(ius); err == nil && f.mtime.Truncate(time.Second).After(t) {
			s.fail(w, r, kind, 412, "PreconditionFailed",
				"At least one of the pre-conditions you specified did not hold",
				[][2]string{{"Condition", "If-Unmodified-Since"}})
			return
		}
	}
	notModified := false
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		notModified = etagMatches(inm, f.etag)
	} else if ims := r.Header.Get("If-Modified-Since"); ims != "" {
		if t, err := http.ParseTime(ims); err == nil && !f.mtime.Truncate(time.Second).After(t) {
			notModified = true
		}
	}
	h["ETag"] = f.etagHdr
	h["Last-Modified"] = f.lastModHdr
	if notModified {
		s.writeHeader(w, 304)
		return
	}
	h["Accept-Ranges"] = hdrBytes
	h["Content-Type"] = hdrOctet
	start, end := int64(0), f.size-1
	code := 200
	if rh := r.Header.Get("Range"); rh != "" {
		a, b, ok, unsat := byteRange(rh, f.size)
		if unsat {
			delete(h, "ETag")
			delete(h, "Last-Modified")
			delete(h, "Accept-Ranges")
			h["Content-Range"] = []string{"bytes */" + strconv.FormatInt(f.size, 10)}
			s.fail(w, r, kind, 416, "InvalidRange", "The requested range is not satisfiable",
				[][2]string{{"RangeRequested", rh}, {"ActualObjectSize", strconv.FormatInt(f.size, 10)}})
			return
		}
		if ok {
			start, end, code = a, b, 206
			h["Content-Range"] = []string{"bytes " + strconv.FormatInt(a, 10) + "-" + strconv.FormatInt(b, 10) +
				"/" + strconv.FormatInt(f.size, 10)}
		}
	}
	n := end - start + 1
	h["Content-Length"] = []string{strconv.FormatInt(n, 10)}
	s.writeHeader(w, code)
	if kind == kindHead || n <= 0 {
		return
	}
	bp := getBufFor(n)
	buf := *bp
	for off := start; off <= end; {
		want := end + 1 - off
		if want > int64(len(buf)) {
			want = int64(len(buf))
		}
		m, err := f.f.ReadAt(buf[:want], off)
		if m > 0 {
			if _, werr := w.Write(buf[:m]); werr != nil {
				break
			}
			s.stats.bytesBody.Add(int64(m))
			off += int64(m)
		}
		if err != nil && (err != io.EOF || m == 0) {
			break // the file shrank under us: the client sees a short body
		}
	}
	putBuf(bp)
}

func (s *server) putObject(w http.ResponseWriter, r *http.Request, bucket, key, rel string) {
	s.stats.requests[kindPut].Add(1)
	if !s.allow(kindPut, parentPrefix(rel)) {
		s.slowDown(w, r, kindPut)
		return
	}
	var body io.Reader = r.Body
	if strings.Contains(r.Header.Get("Content-Encoding"), "aws-chunked") ||
		strings.HasPrefix(r.Header.Get("x-amz-content-sha256"), "STREAMING-") {
		body = &awsChunkedReader{r: newLineReader(r.Body)}
	}
	etag, _, err := s.st.putObject(bucket, key, body)
	switch {
	case err == errNoBucket:
		s.noSuchBucket(w, r, kindPut, bucket)
		return
	case err == errBadKey:
		s.fail(w, r, kindPut, 400, "InvalidArgument", "This key cannot be stored by s3link (it is not a file path)",
			[][2]string{{"Key", key}})
		return
	case err != nil:
		s.fail(w, r, kindPut, 500, "InternalError", "We encountered an internal error. Please try again.", nil)
		return
	}
	h := w.Header()
	h["ETag"] = []string{etag}
	h["Content-Length"] = hdrZero
	s.writeHeader(w, 200)
}

func (s *server) deleteObject(w http.ResponseWriter, r *http.Request, bucket, key, rel string) {
	s.stats.requests[kindOther].Add(1)
	if !s.allow(kindOther, parentPrefix(rel)) {
		s.slowDown(w, r, kindOther)
		return
	}
	if err := s.st.deleteObject(bucket, key); err != nil {
		if err == errNoBucket {
			s.noSuchBucket(w, r, kindOther, bucket)
		} else {
			s.fail(w, r, kindOther, 500, "InternalError", "We encountered an internal error. Please try again.", nil)
		}
		return
	}
	s.writeHeader(w, 204)
}

// ---- buckets -------------------------------------------------------------

func (s *server) bucketOp(w http.ResponseWriter, r *http.Request, bucket string) {
	var q url.Values
	if r.URL.RawQuery != "" {
		var err error
		if q, err = url.ParseQuery(r.URL.RawQuery); err != nil {
			s.fail(w, r, kindOther, 400, "InvalidArgument", "Bad query string", nil)
			return
		}
	}
	switch r.Method {
	case http.MethodHead:
		s.stats.requests[kindHead].Add(1)
		if !s.allow(kindHead, bucket+"/") {
			s.slowDown(w, r, kindHead)
			return
		}
		if !s.st.bucketExists(bucket) {
			s.noSuchBucket(w, r, kindHead, bucket)
			return
		}
		w.Header()["x-amz-bucket-region"] = []string{s.region}
		w.Header()["Content-Length"] = hdrZero
		s.writeHeader(w, 200)
	case http.MethodGet:
		if _, ok := q["location"]; ok {
			s.stats.requests[kindOther].Add(1)
			if !s.st.bucketExists(bucket) {
				s.noSuchBucket(w, r, kindOther, bucket)
				return
			}
			body := `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
				`<LocationConstraint xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`
			if s.region != "us-east-1" {
				body += s.region
			}
			body += "</LocationConstraint>"
			s.writeBody(w, 200, body)
			return
		}
		for k := range q {
			switch k {
			case "list-type", "prefix", "delimiter", "max-keys", "continuation-token", "start-after",
				"encoding-type", "fetch-owner", "marker", "x-id":
			default:
				s.notImplemented(w, r, kindOther)
				return
			}
		}
		s.listObjects(w, r, bucket, q)
	case http.MethodPut:
		s.stats.requests[kindPut].Add(1)
		if len(q) != 0 {
			s.notImplemented(w, r, kindOther)
			return
		}
		if !validBucketName(bucket) {
			s.fail(w, r, kindPut, 400, "InvalidBucketName", "The specified bucket is not valid.",
				[][2]string{{"BucketName", bucket}})
			return
		}
		if err := s.st.createBucket(bucket); err != nil {
			s.fail(w, r, kindPut, 500, "InternalError", "We encountered an internal error. Please try again.", nil)
			return
		}
		w.Header()["Location"] = []string{"/" + bucket}
		w.Header()["Content-Length"] = hdrZero
		s.writeHeader(w, 200)
	default:
		s.notImplemented(w, r, kindOther)
	}
}

func (s *server) writeBody(w http.ResponseWriter, code int, body string) {
	h := w.Header()
	h["Content-Type"] = hdrXML
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	s.writeHeader(w, code)
	io.WriteString(w, body)
	s.stats.bytesBody.Add(int64(len(body)))
}

func (s *server) listBuckets(w http.ResponseWriter, r *http.Request) {
	s.stats.requests[kindList].Add(1)
	names, times, err := s.st.buckets()
	if err != nil {
		s.fail(w, r, kindList, 500, "InternalError", "We encountered an internal error. Please try again.", nil)
		return
	}
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<ListAllMyBucketsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Owner><ID>s3link</ID>` +
		`<DisplayName>s3link</DisplayName></Owner><Buckets>`)
	for i, n := range names {
		b.WriteString("<Bucket><Name>")
		xmlEscape(&b, n)
		b.WriteString("</Name><CreationDate>" + times[i].UTC().Format("2006-01-02T15:04:05.000Z") +
			"</CreationDate></Bucket>")
	}
	b.WriteString("</Buckets></ListAllMyBucketsResult>")
	s.writeBody(w, 200, b.String())
}

// s3URLEncode: EncodingType=url as S3 writes it (space as '+', '/' kept);
// clients decode with unquote_plus.
func s3URLEncode(v string) string {
	return strings.ReplaceAll(url.QueryEscape(v), "%2F", "/")
}

type xmlOut struct {
	b   strings.Builder
	enc bool
}

func (o *xmlOut) elem(name, v string) {
	o.b.WriteString("<" + name + ">")
	xmlEscape(&o.b, v)
	o.b.WriteString("</" + name + ">")
}

func (o *xmlOut) keyElem(name, v string) {
	if o.enc {
		v = s3URLEncode(v)
	}
	o.elem(name, v)
}

const continuationKey, continuationCP = "k", "p"

func encodeToken(last string, isCP bool) string {
	kind := continuationKey
	if isCP {
		kind = continuationCP
	}
	return base64.RawURLEncoding.EncodeToString([]byte(kind + last))
}

func decodeToken(tok string) (string, bool, error) {
	b, err := urlDecodeB64(tok)
	if err != nil || len(b) == 0 || (b[0] != 'k' && b[0] != 'p') {
		return "", false, errors.New("bad token")
	}
	return string(b[1:]), b[0] == 'p', nil
}

func urlDecodeB64(tok string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(tok, "="))
}

func (s *server) listObjects(w http.ResponseWriter, r *http.Request, bucket string, q url.Values) {
	s.stats.requests[kindList].Add(1)
	v2 := q.Get("list-type") == "2"
	prefix, delim := q.Get("prefix"), q.Get("delimiter")
	if !s.allow(kindList, bucket+"/"+parentPrefix(prefix)) {
		s.slowDown(w, r, kindList)
		return
	}
	if lt := q.Get("list-type"); lt != "" && lt != "2" {
		s.fail(w, r, kindList, 400, "InvalidArgument", "Invalid List Type specified", nil)
		return
	}
	maxKeys := 1000
	if mk := q.Get("max-keys"); mk != "" {
		n, err := strconv.Atoi(mk)
		if err != nil || n < 0 {
			s.fail(w, r, kindList, 400, "InvalidArgument", "Provided max-keys not an integer or within integer range",
				[][2]string{{"ArgumentName", "max-keys"}, {"ArgumentValue", mk}})
			return
		}
		if n < maxKeys {
			maxKeys = n
		}
	}
	enc := q.Get("encoding-type")
	if enc != "" && enc != "url" {
		s.fail(w, r, kindList, 400, "InvalidArgument", "Invalid Encoding Method specified in Request",
			[][2]string{{"ArgumentName", "encoding-type"}, {"ArgumentValue", enc}})
		return
	}
	after, afterCP := "", false
	token, startAfter, marker := q.Get("continuation-token"), q.Get("start-after"), q.Get("marker")
	if v2 {
		if _, has := q["continuation-token"]; has {
			var err error
			if after, afterCP, err = decodeToken(token); err != nil {
				s.fail(w, r, kindList, 400, "InvalidArgument", "The continuation token provided is incorrect",
					[][2]string{{"ArgumentName", "continuation-token"}})
				return
			}
		} else {
			after = startAfter
		}
	} else {
		after = marker
	}
	bl, err := s.st.keys(bucket)
	if err != nil {
		if err == errNoBucket {
			s.noSuchBucket(w, r, kindList, bucket)
		} else {
			s.fail(w, r, kindList, 500, "InternalError", "We encountered an internal error. Please try again.", nil)
		}
		return
	}
	pg := bl.page(prefix, delim, after, afterCP, maxKeys)
	o := &xmlOut{enc: enc == "url"}
	o.b.Grow(256 + 300*(len(pg.contents)+len(pg.prefixes)))
	o.b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`)
	o.elem("Name", bucket)
	o.keyElem("Prefix", prefix)
	if v2 {
		if _, has := q["continuation-token"]; has {
			o.elem("ContinuationToken", token)
		}
		if startAfter != "" {
			o.keyElem("StartAfter", startAfter)
		}
		o.elem("KeyCount", strconv.Itoa(len(pg.contents)+len(pg.prefixes)))
	} else {
		o.keyElem("Marker", marker)
	}
	o.elem("MaxKeys", strconv.Itoa(maxKeys))
	if delim != "" {
		o.keyElem("Delimiter", delim)
	}
	if o.enc {
		o.elem("EncodingType", "url")
	}
	if pg.truncated {
		o.elem("IsTruncated", "true")
		if v2 {
			o.elem("NextContinuationToken", encodeToken(pg.last, pg.lastIsCP))
		} else {
			o.keyElem("NextMarker", pg.last)
		}
	} else {
		o.elem("IsTruncated", "false")
	}
	for i := range pg.contents {
		e := &pg.contents[i]
		o.b.WriteString("<Contents>")
		o.keyElem("Key", e.key)
		o.elem("LastModified", e.mtime.UTC().Format("2006-01-02T15:04:05.000Z"))
		o.elem("ETag", e.etag(bucket))
		o.elem("Size", strconv.FormatInt(e.size, 10))
		o.b.WriteString("<StorageClass>STANDARD</StorageClass></Contents>")
	}
	for _, p := range pg.prefixes {
		o.b.WriteString("<CommonPrefixes>")
		o.keyElem("Prefix", p)
		o.b.WriteString("</CommonPrefixes>")
	}
	o.b.WriteString("</ListBucketResult>")
	s.writeBody(w, 200, o.b.String())
}

// ---- control -------------------------------------------------------------

func (s *server) control(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	send := func(code int, ctype string, body []byte) {
		h["Content-Type"] = []string{ctype}
		h["Content-Length"] = []string{strconv.Itoa(len(body))}
		w.WriteHeader(code)
		w.Write(body)
	}
	rates := func() (float64, float64) { return s.getRL.Load().rate, s.putRL.Load().rate }
	switch {
	case r.URL.Path == "/__s3link/stats" && r.Method == http.MethodGet:
		g, p := rates()
		var timing map[string]interface{}
		if s.em != nil {
			timing = s.em.timing(false)
		}
		send(200, "application/json", s.stats.json(s.link, timing, g, p))
	case r.URL.Path == "/__s3link/reset" && r.Method == http.MethodPost:
		s.stats.reset()
		if s.em != nil {
			s.em.timing(true)
		}
		send(200, "application/json", []byte("{\"reset\": true}\n"))
	case r.URL.Path == "/__s3link/config" && r.Method == http.MethodPost:
		// ?get-rate=N&put-rate=N: change the request-rate limits (fresh buckets).
		q := r.URL.Query()
		for name, p := range map[string]*atomic.Pointer[limiter]{"get-rate": &s.getRL, "put-rate": &s.putRL} {
			if v := q.Get(name); v != "" {
				f, err := strconv.ParseFloat(v, 64)
				if err != nil {
					send(400, "text/plain", []byte("bad "+name+"\n"))
					return
				}
				p.Store(newLimiter(f))
			}
		}
		g, p := rates()
		send(200, "application/json", []byte(fmt.Sprintf("{\"get_rate\": %g, \"put_rate\": %g}\n", g, p)))
	default:
		send(404, "text/plain", []byte("unknown control request\n"))
	}
}

// ---- aws-chunked request bodies (SigV4 streaming uploads) -----------------

type lineReader struct {
	r   io.Reader
	buf []byte
	pos int
	end int
}

func newLineReader(r io.Reader) *lineReader { return &lineReader{r: r, buf: make([]byte, 64<<10)} }

func (l *lineReader) fill() error {
	if l.pos > 0 {
		copy(l.buf, l.buf[l.pos:l.end])
		l.end -= l.pos
		l.pos = 0
	}
	n, err := l.r.Read(l.buf[l.end:])
	l.end += n
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

func (l *lineReader) line() (string, error) {
	for {
		if i := bytes.Index(l.buf[l.pos:l.end], []byte("\r\n")); i >= 0 {
			s := string(l.buf[l.pos : l.pos+i])
			l.pos += i + 2
			return s, nil
		}
		if l.end-l.pos == len(l.buf) {
			return "", errors.New("aws-chunked: line too long")
		}
		if err := l.fill(); err != nil {
			return "", err
		}
	}
}

func (l *lineReader) Read(p []byte) (int, error) {
	if l.pos == l.end {
		if err := l.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, l.buf[l.pos:l.end])
	l.pos += n
	return n, nil
}

// awsChunkedReader decodes "SIZE[;chunk-signature=...]\r\nDATA\r\n" ... "0...\r\n"
// [trailers] "\r\n". Signatures and trailing checksums are not checked.
type awsChunkedReader struct {
	r    *lineReader
	left int64
	done bool
}

func (a *awsChunkedReader) Read(p []byte) (int, error) {
	if a.done {
		return 0, io.EOF
	}
	if a.left == 0 {
		ln, err := a.r.line()
		if err != nil {
			return 0, err
		}
		if i := strings.IndexByte(ln, ';'); i >= 0 {
			ln = ln[:i]
		}
		n, err := strconv.ParseInt(strings.TrimSpace(ln), 16, 64)
		if err != nil || n < 0 {
			return 0, errors.New("aws-chunked: bad chunk size")
		}
		if n == 0 {
			a.done = true
			return 0, io.EOF
		}
		a.left = n
	}
	if int64(len(p)) > a.left {
		p = p[:a.left]
	}
	n, err := a.r.Read(p)
	a.left -= int64(n)
	if a.left == 0 && err == nil {
		if _, err := a.r.line(); err != nil { // the CRLF after the data
			return n, err
		}
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

type stringWriter interface {
	WriteString(string) (int, error)
	WriteByte(byte) error
	WriteRune(rune) (int, error)
}

// xmlEscape writes v as XML character data the way S3 does (&quot; for
// quotes); characters XML 1.0 cannot carry become U+FFFD (clients that need
// them list with encoding-type=url).
func xmlEscape(w stringWriter, v string) {
	for i := 0; i < len(v); {
		c := v[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '&':
				w.WriteString("&amp;")
			case c == '<':
				w.WriteString("&lt;")
			case c == '>':
				w.WriteString("&gt;")
			case c == '"':
				w.WriteString("&quot;")
			case c == '\'':
				w.WriteString("&apos;")
			case c == '\r':
				w.WriteString("&#13;")
			case c < 0x20 && c != '\t' && c != '\n':
				w.WriteRune(utf8.RuneError)
			default:
				w.WriteByte(c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(v[i:])
		if r == utf8.RuneError && n == 1 || r == 0xFFFE || r == 0xFFFF {
			w.WriteRune(utf8.RuneError)
		} else {
			w.WriteString(v[i : i+n])
		}
		i += n
	}
}
