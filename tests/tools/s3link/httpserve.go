package main

// The HTTP/1.1 connection loop. Requests are read by request.go (request
// line, headers, Content-Length and chunked bodies) into a reused
// http.Request; responses are assembled in a per-connection buffer and
// written with one write when they fit in it (a small GET: status line,
// headers and body in one syscall and, on an emulated link, one chunk),
// streamed beyond it. Keep-alive, pipelining (served in order),
// Expect: 100-continue, HEAD. HTTP/1.1 only: with --tls, ALPN offers only
// http/1.1, and there is no h2 code path at all.

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

const (
	respBufSize  = 64 << 10 // responses up to this size go out in one write
	maxDrainBody = 256 << 10
)

// respWriter: http.ResponseWriter over one connection, reused for each of
// its requests.
type respWriter struct {
	conn        net.Conn
	hdr         http.Header
	out         []byte
	status      int
	wroteHeader bool // status and headers are in out (or sent)
	flushed     bool // something was sent for this response
	head        bool
	noBody      bool
	closeAfter  bool
	clen        int64 // Content-Length given, -1 if none
	written     int64
	err         error
}

func (w *respWriter) Header() http.Header { return w.hdr }

func (w *respWriter) reset(head bool) {
	for k := range w.hdr {
		delete(w.hdr, k)
	}
	w.out = w.out[:0]
	w.status = 0
	w.wroteHeader, w.flushed, w.head, w.noBody = false, false, head, false
	w.clen, w.written = -1, 0
}

func (w *respWriter) WriteHeader(code int) {
	if w.wroteHeader {
		return
	}
	w.wroteHeader = true
	w.status = code
	w.noBody = w.head || code == 204 || code == 304 || (code >= 100 && code < 200)
	if v := w.hdr["Content-Length"]; len(v) > 0 {
		if n, err := strconv.ParseInt(v[0], 10, 64); err == nil && n >= 0 {
			w.clen = n
		}
	}
	w.out = appendStatusLine(w.out, code)
	for k, vs := range w.hdr {
		if k == "Content-Length" && (code == 204 || (code >= 100 && code < 200)) {
			continue
		}
		for _, v := range vs {
			w.out = append(w.out, k...)
			w.out = append(w.out, ": "...)
			w.out = append(w.out, v...)
			w.out = append(w.out, "\r\n"...)
		}
	}
	w.out = append(w.out, "Date: "...)
	w.out = time.Now().UTC().AppendFormat(w.out, http.TimeFormat)
	w.out = append(w.out, "\r\n"...)
	if w.clen < 0 && !w.noBody {
		// Unknown length: the body ends when the connection does.
		w.closeAfter = true
	}
	if w.closeAfter {
		w.out = append(w.out, "Connection: close\r\n"...)
	}
	w.out = append(w.out, "\r\n"...)
}

func appendStatusLine(b []byte, code int) []byte {
	b = append(b, "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, ' ')
	text := http.StatusText(code)
	if text == "" {
		text = "status code " + strconv.Itoa(code)
	}
	b = append(b, text...)
	return append(b, "\r\n"...)
}

func (w *respWriter) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(200)
	}
	if w.noBody {
		return len(p), nil
	}
	if w.err != nil {
		return 0, w.err
	}
	if w.clen >= 0 && w.written+int64(len(p)) > w.clen {
		return 0, io.ErrShortWrite // more than Content-Length: a handler bug
	}
	w.written += int64(len(p))
	if len(w.out)+len(p) <= respBufSize {
		w.out = append(w.out, p...)
		return len(p), nil
	}
	if err := w.flush(); err != nil {
		return 0, err
	}
	if len(p) <= respBufSize/2 {
		w.out = append(w.out, p...)
		return len(p), nil
	}
	if _, err := w.conn.Write(p); err != nil {
		w.err = err
		return 0, err
	}
	return len(p), nil
}

func (w *respWriter) flush() error {
	w.flushed = true
	if len(w.out) == 0 {
		return nil
	}
	_, err := w.conn.Write(w.out)
	w.out = w.out[:0]
	if err != nil {
		w.err = err
	}
	return err
}

// finish completes the response; false: the connection must close.
func (w *respWriter) finish() bool {
	if !w.wroteHeader {
		if _, ok := w.hdr["Content-Length"]; !ok {
			w.hdr["Content-Length"] = hdrZero
		}
		w.WriteHeader(200)
	}
	if w.flush() != nil {
		return false
	}
	if w.clen >= 0 && !w.noBody && w.written != w.clen {
		return false // short body (a file shrank): the client must see the cut
	}
	return !w.closeAfter
}

// continueBody sends "100 Continue" before the first read of a body whose
// client waits for it.
type continueBody struct {
	io.ReadCloser
	w    *respWriter
	sent bool
}

func (b *continueBody) Read(p []byte) (int, error) {
	if !b.sent {
		b.sent = true
		if !b.w.flushed && len(b.w.out) == 0 {
			if _, err := b.w.conn.Write([]byte("HTTP/1.1 100 Continue\r\n\r\n")); err != nil {
				return 0, err
			}
		}
	}
	return b.ReadCloser.Read(p)
}

func (s *server) serveConn(c net.Conn) {
	defer c.Close()
	br := bufio.NewReaderSize(c, 16<<10)
	rr := newReqReader(br)
	w := &respWriter{conn: c, hdr: make(http.Header, 12), out: make([]byte, 0, 8<<10)}
	lc, _ := c.(*linkConn)
	for {
		req, err := rr.next()
		if err != nil {
			if err != io.EOF && !isClosedErr(err) {
				// Malformed request: answer 400 and close, as net/http does.
				c.Write([]byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
			}
			return
		}
		w.reset(req.Method == http.MethodHead)
		w.closeAfter = req.Close
		sawContinue := false
		if req.ContentLength != 0 && strings.EqualFold(req.Header.Get("Expect"), "100-continue") {
			req.Body = &continueBody{ReadCloser: req.Body, w: w}
			sawContinue = true
		}
		s.serve(w, req, lc)
		keep := w.finish()
		if req.Body != nil && req.Body != http.NoBody {
			cb, isCont := req.Body.(*continueBody)
			if sawContinue && isCont && !cb.sent {
				// The client never got 100 Continue: it may not send the
				// body at all; the connection cannot be reused.
				keep = false
			} else if n, _ := io.CopyN(io.Discard, req.Body, maxDrainBody+1); n > maxDrainBody {
				keep = false
			}
			req.Body.Close()
		}
		if !keep {
			return
		}
	}
}

func isClosedErr(err error) bool {
	if err == errBadRequest {
		return false
	}
	if err == io.ErrUnexpectedEOF {
		return true
	}
	if ne, ok := err.(net.Error); ok && !ne.Timeout() {
		return true
	}
	s := err.Error()
	return strings.Contains(s, "use of closed network connection") || strings.Contains(s, "connection reset")
}

// serveListener: the accept loop.
func (s *server) serveListener(l net.Listener) error {
	var delay time.Duration
	for {
		c, err := l.Accept()
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Temporary() { //nolint:staticcheck // EMFILE and the like
				if delay == 0 {
					delay = 5 * time.Millisecond
				} else if delay < time.Second {
					delay *= 2
				}
				time.Sleep(delay)
				continue
			}
			return err
		}
		delay = 0
		go s.serveConn(c)
	}
}
