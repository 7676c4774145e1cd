package main

// A lean HTTP/1.1 request reader: the request line and headers into one
// reused http.Request per connection (no per-request textproto reader,
// common header names canonicalized without allocating), bodies framed by
// Content-Length or chunked transfer coding. What it does not understand
// it refuses (400, and the connection closes), as net/http would.

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httputil"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
)

var errBadRequest = errors.New("s3link: malformed request")

const maxRequestHead = 64 << 10

// knownHeaders maps header names as clients send them to their canonical
// form; the lookup with a []byte key does not allocate.
var knownHeaders = map[string]string{}

func init() {
	for _, k := range []string{"Host", "Range", "If-Match", "If-None-Match", "If-Modified-Since",
		"If-Unmodified-Since", "User-Agent", "Accept", "Accept-Encoding", "Authorization", "Connection",
		"Content-Length", "Content-Type", "Content-Md5", "Content-Encoding", "Transfer-Encoding", "Expect",
		"X-Amz-Date", "X-Amz-Content-Sha256", "X-Amz-Security-Token", "X-Amz-User-Agent",
		"X-Amz-Decoded-Content-Length", "X-Amz-Checksum-Crc32", "X-Amz-Sdk-Checksum-Algorithm",
		"X-Amz-Trailer", "X-Amz-Copy-Source", "Amz-Sdk-Invocation-Id", "Amz-Sdk-Request", "Keep-Alive"} {
		knownHeaders[k] = k
		knownHeaders[strings.ToLower(k)] = k
	}
}

// reqReader reads the requests of one connection.
type reqReader struct {
	br   *bufio.Reader
	req  http.Request
	url  url.URL
	hdr  http.Header
	line []byte // a request line or header line longer than the bufio buffer
	vals []string
}

func newReqReader(br *bufio.Reader) *reqReader {
	r := &reqReader{br: br, hdr: make(http.Header, 16)}
	return r
}

// readLine: the next line without its CRLF (or LF); valid until the next call.
func (r *reqReader) readLine(total *int) ([]byte, error) {
	b, err := r.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		r.line = append(r.line[:0], b...)
		for err == bufio.ErrBufferFull {
			if len(r.line) > maxRequestHead {
				return nil, errBadRequest
			}
			b, err = r.br.ReadSlice('\n')
			r.line = append(r.line, b...)
		}
		b = r.line
	}
	*total += len(b)
	if err != nil {
		if err == io.EOF && *total > len(b) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	if *total > maxRequestHead {
		return nil, errBadRequest
	}
	b = b[:len(b)-1]
	if len(b) > 0 && b[len(b)-1] == '\r' {
		b = b[:len(b)-1]
	}
	return b, nil
}

// next reads one request. io.EOF: the client closed between requests.
func (r *reqReader) next() (*http.Request, error) {
	total := 0
	var line []byte
	var err error
	for {
		if line, err = r.readLine(&total); err != nil {
			if total == 0 || err == io.ErrUnexpectedEOF {
				return nil, err
			}
			return nil, err
		}
		if len(line) > 0 {
			break
		}
		if total > 8 { // a few empty lines before a request are tolerated
			return nil, errBadRequest
		}
	}
	req := &r.req
	*req = http.Request{}
	for k := range r.hdr {
		delete(r.hdr, k)
	}
	req.Header = r.hdr
	// METHOD SP request-target SP HTTP/x.y
	s := string(line) // one allocation: the path and query are substrings of it
	i := strings.IndexByte(s, ' ')
	j := strings.LastIndexByte(s, ' ')
	if i <= 0 || j <= i+1 {
		return nil, errBadRequest
	}
	req.Method, req.RequestURI, req.Proto = s[:i], s[i+1:j], s[j+1:]
	var ok bool
	if req.ProtoMajor, req.ProtoMinor, ok = http.ParseHTTPVersion(req.Proto); !ok || req.ProtoMajor != 1 {
		return nil, errBadRequest
	}
	for _, c := range []byte(req.Method) {
		if c <= ' ' || c >= 0x7f {
			return nil, errBadRequest
		}
	}
	if err := r.parseTarget(req.RequestURI); err != nil {
		return nil, err
	}
	req.URL = &r.url
	// Headers.
	for {
		line, err := r.readLine(&total)
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if len(line) == 0 {
			break
		}
		if line[0] == ' ' || line[0] == '\t' {
			return nil, errBadRequest // obsolete line folding
		}
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 {
			return nil, errBadRequest
		}
		kb := line[:colon]
		for _, c := range kb {
			if c <= ' ' || c >= 0x7f || c == '"' || c == '(' || c == ')' || c == ',' || c == '/' || c == ';' ||
				c == '<' || c == '=' || c == '>' || c == '?' || c == '@' || c == '[' || c == '\\' || c == ']' ||
				c == '{' || c == '}' {
				return nil, errBadRequest
			}
		}
		key, known := knownHeaders[string(kb)]
		if !known {
			key = textproto.CanonicalMIMEHeaderKey(string(kb))
		}
		v := bytes.TrimRight(bytes.TrimLeft(line[colon+1:], " \t"), " \t")
		r.hdr[key] = append(r.hdr[key], string(v))
	}
	req.Host = r.hdr.Get("Host")
	if req.Host == "" && req.ProtoMinor >= 1 {
		return nil, errBadRequest
	}
	// Persistence.
	conn := r.hdr.Get("Connection")
	if req.ProtoMinor == 0 {
		req.Close = !strings.EqualFold(conn, "keep-alive")
	} else {
		req.Close = hasToken(conn, "close")
	}
	// Body framing.
	te, hasTE := r.hdr["Transfer-Encoding"]
	cl, hasCL := r.hdr["Content-Length"]
	switch {
	case hasTE:
		if len(te) != 1 || !strings.EqualFold(strings.TrimSpace(te[0]), "chunked") {
			return nil, errBadRequest
		}
		req.TransferEncoding = []string{"chunked"}
		req.ContentLength = -1
		req.Body = io.NopCloser(httputil.NewChunkedReader(r.br))
		if hasCL {
			delete(r.hdr, "Content-Length")
			req.Close = true
		}
	case hasCL:
		n, err := strconv.ParseInt(strings.TrimSpace(cl[0]), 10, 64)
		if err != nil || n < 0 || len(cl) > 1 && !allSame(cl) {
			return nil, errBadRequest
		}
		req.ContentLength = n
		if n > 0 {
			req.Body = &limitedBody{r: r.br, left: n}
		} else {
			req.Body = http.NoBody
		}
	default:
		req.Body = http.NoBody
	}
	return req, nil
}

// parseTarget fills r.url from an origin-form target (/path?query), or an
// absolute-form one.
func (r *reqReader) parseTarget(t string) error {
	r.url = url.URL{}
	if t == "" {
		return errBadRequest
	}
	if t[0] != '/' {
		u, err := url.ParseRequestURI(t)
		if err != nil {
			return errBadRequest
		}
		r.url = *u
		return nil
	}
	p, q := t, ""
	if i := strings.IndexByte(t, '?'); i >= 0 {
		p, q = t[:i], t[i+1:]
		r.url.ForceQuery = q == ""
	}
	r.url.RawQuery = q
	if strings.IndexByte(p, '%') >= 0 {
		up, err := url.PathUnescape(p)
		if err != nil {
			return errBadRequest
		}
		r.url.Path, r.url.RawPath = up, p
	} else {
		r.url.Path = p
	}
	return nil
}

func hasToken(v, token string) bool {
	for v != "" {
		var t string
		if i := strings.IndexByte(v, ','); i >= 0 {
			t, v = v[:i], v[i+1:]
		} else {
			t, v = v, ""
		}
		if strings.EqualFold(strings.TrimSpace(t), token) {
			return true
		}
	}
	return false
}

func allSame(vs []string) bool {
	for _, v := range vs[1:] {
		if strings.TrimSpace(v) != strings.TrimSpace(vs[0]) {
			return false
		}
	}
	return true
}

// limitedBody: a Content-Length body.
type limitedBody struct {
	r    *bufio.Reader
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	if err == io.EOF && b.left > 0 {
		err = io.ErrUnexpectedEOF
	}
	if b.left == 0 && err == nil {
		err = io.EOF
	}
	return n, err
}

func (b *limitedBody) Close() error { return nil }
