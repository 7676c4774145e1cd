package main

// The connection side of the emulated link: linkConn (what the connection
// loop reads and writes; responses are queued for the link, chunks written
// by run() or the connection's writer goroutine), stampConn (kernel receive
// timestamps), the listener that wraps accepted connections, and the
// pass-through countConn of lan.

import (
	"crypto/tls"
	"encoding/binary"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// linkConn: a server-side connection whose responses go through the link.
type linkConn struct {
	net.Conn
	em       *emulator
	raw      syscall.RawConn // non-blocking writes from run(); nil for TLS
	direct   bool
	accepted int64
	arrival  int64 // atomic: when the last bytes were read (a request arrived)
	served   bool  // the first request has waited out the handshake (connection goroutine only)
	wake     chan struct{}
	wsig     chan struct{}
	cond     *sync.Cond // on em.mu: Write waiting for the link to drain
	closeMu  sync.Once
	blocked  bool // run() only: the socket took less than offered in this batch
	writeFn  func(uintptr) bool
	wbuf     []byte // run() only: tryWrite's arguments and results
	wn       int
	werr     error
	stamps   *stampConn // kernel receive times, when the socket gives them

	// Under em.mu:
	oneway         int64 // one-way delay of the response being written
	notBefore      int64 // when the response may enter the link
	eligible       int64 // when its bytes were there and it could: max(notBefore, written)
	bypass         bool  // control responses: no delay, no bandwidth
	pending        []*chunk
	pendingBytes   int
	inRing         bool
	activating     bool // an evActivate is queued
	lastDue        int64
	inflight       int // chunks scheduled or ready, not yet written
	ready          []*chunk
	writerBusy     bool // the writer goroutine owns delivery until ready drains
	writerStarted  bool
	closing        bool
	dead           bool
	writersWaiting int
}

func newLinkConn(c net.Conn, e *emulator) *linkConn {
	lc := &linkConn{Conn: c, em: e, accepted: monoNow(), wake: make(chan struct{}, 1),
		wsig: make(chan struct{}, 1)}
	lc.cond = sync.NewCond(&e.mu)
	lc.writeFn = lc.rawWrite
	if sc, ok := c.(*stampConn); ok {
		lc.raw, lc.direct, lc.stamps = sc.rc, true, sc
	} else if tc, ok := c.(*tls.Conn); ok {
		lc.stamps, _ = tc.NetConn().(*stampConn)
	}
	return lc
}

func (c *linkConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		t := monoNow()
		if c.stamps != nil {
			// The kernel's receive time of the last segment read: exact
			// however late this goroutine ran.
			if k := atomic.LoadInt64(&c.stamps.last); k > 0 && k <= t && k > t-int64(time.Second) {
				t = k
			}
		}
		atomic.StoreInt64(&c.arrival, t)
	}
	return n, err
}

// beginRequest: a request on c is about to be answered. It draws the
// request's round trip: the response may enter the link one one-way delay
// after the request arrived (on a new connection, not before the handshake's
// round trips are over either) and reaches the client one one-way delay
// after leaving it.
func (c *linkConn) beginRequest() {
	e := c.em
	ow := e.drawOneway()
	nb := atomic.LoadInt64(&c.arrival) + ow
	if !c.served {
		c.served = true
		hs := 2 * ow
		if e.cfg.TLS {
			hs *= 2
		}
		if t := c.accepted + hs + ow; t > nb {
			nb = t
		}
	}
	nb = e.serve(nb)
	e.mu.Lock()
	c.oneway = ow
	c.notBefore = nb
	c.bypass = false
	e.mu.Unlock()
}

// beginControl: the response to a control request bypasses the link.
func (c *linkConn) beginControl() {
	c.em.mu.Lock()
	c.bypass = true
	c.em.mu.Unlock()
}

func (c *linkConn) Write(p []byte) (int, error) {
	e := c.em
	n := len(p)
	e.mu.Lock()
	if c.dead {
		e.mu.Unlock()
		return 0, errConnDead
	}
	now := monoNow()
	if c.bypass || e.nsPerByte == 0 {
		// No bandwidth to share: each chunk leaves when it may.
		dep, ow := c.notBefore, c.oneway
		if c.bypass {
			dep, ow = now, 0
		}
		if dep < now {
			dep = now
		}
		for len(p) > 0 {
			ck := e.getChunk()
			m := copy(ck.b[:cap(ck.b)], p)
			ck.b = ck.b[:m]
			p = p[m:]
			due := dep + ow
			if due < c.lastDue {
				due = c.lastDue
			}
			c.lastDue = due
			c.inflight++
			e.pushEventLocked(event{due: due, kind: evDeliver, c: c, ck: ck})
		}
		e.mu.Unlock()
		e.st.bytesTotal.Add(int64(n))
		return n, nil
	}
	for len(p) > 0 {
		for c.pendingBytes >= maxPending && !c.dead {
			c.writersWaiting++
			c.cond.Wait()
			c.writersWaiting--
		}
		if c.dead {
			e.mu.Unlock()
			return n - len(p), errConnDead
		}
		var ck *chunk
		if k := len(c.pending); k > 0 && len(c.pending[k-1].b) < cap(c.pending[k-1].b) {
			ck = c.pending[k-1] // not yet on the link: top it up
		} else {
			ck = e.getChunk()
			c.pending = append(c.pending, ck)
		}
		m := copy(ck.b[len(ck.b):cap(ck.b)], p)
		ck.b = ck.b[:len(ck.b)+m]
		p = p[m:]
		c.pendingBytes += m
		if !c.inRing && !c.activating {
			if c.notBefore > now {
				c.eligible = c.notBefore
				c.activating = true
				e.pushEventLocked(event{due: c.notBefore, kind: evActivate, c: c})
			} else {
				c.eligible = now
				e.ringPushLocked(c)
			}
		}
	}
	e.mu.Unlock()
	e.st.bytesTotal.Add(int64(n))
	return n, nil
}

// tryWrite: one non-blocking write of what is left of ck (run() only). Sets
// c.blocked when the socket took less, marks c dead on an error.
func (c *linkConn) tryWrite(ck *chunk) {
	for ck.off < len(ck.b) {
		c.wbuf = ck.b[ck.off:]
		err := c.raw.Write(c.writeFn)
		c.wbuf = nil
		if err != nil {
			c.markDead()
			return
		}
		if c.werr == syscall.EINTR {
			continue
		}
		if c.werr == syscall.EAGAIN {
			c.blocked = true
			return
		}
		if c.werr != nil {
			c.markDead()
			return
		}
		ck.off += c.wn
	}
}

// rawWrite: the non-blocking write tryWrite makes (a method value built once).
func (c *linkConn) rawWrite(fd uintptr) bool {
	c.wn, c.werr = syscall.Write(int(fd), c.wbuf)
	return true // never wait here
}

func (c *linkConn) startWriterLocked() {
	if !c.writerStarted {
		c.writerStarted = true
		go c.writer()
	}
}

// writer: writes the chunks handed to it (TLS connections, and sockets run()
// found full), in order; closes the socket once the connection is closed
// and drained.
func (c *linkConn) writer() {
	e := c.em
	var cks []*chunk
	var bufs net.Buffers
	for range c.wsig {
		for {
			e.mu.Lock()
			if len(c.ready) == 0 {
				c.writerBusy = false
				done := c.closing && (c.dead || (c.inflight == 0 && len(c.pending) == 0))
				e.mu.Unlock()
				if done {
					c.closeSocket()
					return
				}
				break
			}
			cks = append(cks[:0], c.ready...)
			for i := range c.ready {
				c.ready[i] = nil
			}
			c.ready = c.ready[:0]
			dead := c.dead
			e.mu.Unlock()
			if !dead {
				bufs = bufs[:0]
				for _, ck := range cks {
					bufs = append(bufs, ck.b[ck.off:])
				}
				b := bufs
				if _, err := b.WriteTo(c.Conn); err != nil {
					c.markDead()
				}
			}
			e.mu.Lock()
			for i, ck := range cks {
				e.putChunk(ck)
				cks[i] = nil
			}
			c.inflight -= len(cks)
			e.mu.Unlock()
		}
	}
}

func (c *linkConn) markDead() {
	e := c.em
	e.mu.Lock()
	if !c.dead {
		c.dead = true
		for i, ck := range c.pending {
			e.putChunk(ck)
			c.pending[i] = nil
		}
		c.pending = c.pending[:0]
		c.pendingBytes = 0
		c.cond.Broadcast()
	}
	e.mu.Unlock()
}

// closeSocket closes the socket once, and lets a waiting writer goroutine
// see that and exit.
func (c *linkConn) closeSocket() {
	c.closeMu.Do(func() { c.Conn.Close() })
	select {
	case c.wsig <- struct{}{}:
	default:
	}
}

// Close: the connection loop is done with the connection. What is still on
// its way is delivered first; the socket is closed after it.
func (c *linkConn) Close() error {
	e := c.em
	e.mu.Lock()
	c.closing = true
	idle := c.inflight == 0 && len(c.pending) == 0
	if c.dead && !idle && c.inflight == 0 {
		idle = true
	}
	if !idle && c.writerStarted {
		e.mu.Unlock()
		select { // a writer waiting for work must see closing
		case c.wsig <- struct{}{}:
		default:
		}
		return nil
	}
	e.mu.Unlock()
	if idle {
		c.closeSocket()
	}
	return nil
}

// pacedBody: a request body read through the upstream bandwidth.
type pacedBody struct {
	io.ReadCloser
	c *linkConn
}

func (b *pacedBody) Read(p []byte) (int, error) {
	if len(p) > 64<<10 {
		p = p[:64<<10]
	}
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.c.em.sleepUntil(b.c, b.c.em.reserveUp(n))
	}
	return n, err
}

// countConn: the pass-through connection (lan): counts bytes written only.
type countConn struct {
	net.Conn
	st *stats
}

func (c *countConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.st.bytesTotal.Add(int64(n))
	return n, err
}

// listener: accepted connections get TLS (--tls) and then either the link
// (linkConn) or, with nothing to emulate, only a byte counter. The link sits
// above TLS: handshake records are not delayed, the handshake's round trips
// are charged before the first response instead.
type listener struct {
	net.Listener
	em  *emulator
	tls *tls.Config
	st  *stats
}

func (l *listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.st.conns.Add(1)
	if l.em != nil {
		if tc, ok := c.(*net.TCPConn); ok {
			if sc := newStampConn(tc); sc != nil {
				c = sc
			}
		}
	}
	if l.tls != nil {
		c = tls.Server(c, l.tls)
	}
	if l.em == nil {
		return &countConn{Conn: c, st: l.st}, nil
	}
	return newLinkConn(c, l.em), nil
}

// stampConn reads a TCP socket with recvmsg and SO_TIMESTAMPNS, keeping the
// kernel's receive time of the last segment read (on run()'s monotonic
// clock): when a request really arrived, whatever the scheduling delay of
// the goroutine that reads it.
type stampConn struct {
	*net.TCPConn
	rc     syscall.RawConn
	readFn func(uintptr) bool
	buf    []byte
	oob    [64]byte
	n      int
	oobn   int
	err    error
	last   int64 // atomic
}

func newStampConn(tc *net.TCPConn) *stampConn {
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return nil
	}
	s := &stampConn{TCPConn: tc, rc: rc}
	s.readFn = s.rawRead
	return s
}

func (s *stampConn) rawRead(fd uintptr) bool {
	s.n, s.oobn, _, _, s.err = syscall.Recvmsg(int(fd), s.buf, s.oob[:], 0)
	return s.err != syscall.EAGAIN
}

func (s *stampConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		s.buf = p
		err := s.rc.Read(s.readFn)
		s.buf = nil
		if err != nil {
			return 0, err
		}
		if s.err == syscall.EINTR {
			continue
		}
		if s.err != nil {
			return 0, &net.OpError{Op: "read", Net: "tcp", Err: s.err}
		}
		if s.n == 0 {
			return 0, io.EOF
		}
		if s.oobn > 0 {
			s.stamp()
		}
		return s.n, nil
	}
}

// stamp finds SCM_TIMESTAMPNS among the control messages (parsed by hand:
// no allocation per read).
func (s *stampConn) stamp() {
	b := s.oob[:s.oobn]
	for len(b) >= syscall.SizeofCmsghdr {
		h := (*syscall.Cmsghdr)(unsafe.Pointer(&b[0]))
		l := int(h.Len)
		if l < syscall.SizeofCmsghdr || l > len(b) {
			return
		}
		data := b[syscall.SizeofCmsghdr:l]
		if h.Level == syscall.SOL_SOCKET && h.Type == syscall.SO_TIMESTAMPNS && len(data) >= 16 {
			sec := int64(binary.LittleEndian.Uint64(data[0:8]))
			nsec := int64(binary.LittleEndian.Uint64(data[8:16]))
			now := time.Now()
			atomic.StoreInt64(&s.last, int64(now.Sub(epoch))-(now.UnixNano()-(sec*1e9+nsec)))
			return
		}
		next := syscall.CmsgSpace(l - syscall.SizeofCmsghdr)
		if next > len(b) {
			return
		}
		b = b[next:]
	}
}
