package main

// The emulated network link, inside the server (no proxy in the data path).
//
// Model (see README.md):
//   - a new connection costs one extra round trip (TCP handshake) before its
//     first request is served, two with TLS (TCP + TLS 1.3);
//   - a request reaches the server one one-way delay after it arrived here:
//     its response may not enter the link before then;
//   - responses (headers and body) share one downstream link: the scheduler
//     serves the responses with bytes waiting round-robin, one chunk (at
//     most a quantum, 16 KiB) at a time, and keeps a virtual "link busy
//     until" clock; a chunk leaves the link when the clock has moved past it
//     and is written to the socket one one-way delay later, in order per
//     connection;
//   - request bodies (PUT) share one upstream bandwidth.
//
// The request is parsed and answered (file read, response assembled) as
// soon as it arrives; what is delayed is its response. One goroutine (run)
// owns the clock: it pops due events from a min-heap (a response becoming
// eligible for the link, a chunk due at the client, a handler's wake-up),
// assigns link departures round-robin (at most lookahead ahead of real
// time), and writes due chunks to their sockets itself with non-blocking
// writes (a connection's own writer goroutine takes over when a socket is
// full, and for TLS). Everything due within a small window (calibrated from
// how late the runtime's timer fires) is handled in one pass, so at high
// rates one wake-up serves many events.

import (
	"errors"
	"math"
	"math/rand"
	"sync"
	"time"
)

var epoch = time.Now()

// monoNow: nanoseconds on the monotonic clock since the process started.
func monoNow() int64 { return int64(time.Since(epoch)) }

const (
	lookahead     = int64(2 * time.Millisecond) // how far the scheduler runs ahead of real time
	maxPending    = 1 << 20                     // bytes a response may queue before the link before Write blocks
	minWindow     = int64(50 * time.Microsecond)
	maxWindow     = int64(1 * time.Millisecond)
	initialWindow = int64(300 * time.Microsecond)
	maxCatchUp    = int64(2 * time.Millisecond)
)

var errConnDead = errors.New("s3link: connection closed by peer")

type linkConfig struct {
	Name    string
	RTT     time.Duration
	Jitter  time.Duration // RTT drawn uniformly in [RTT-Jitter, RTT+Jitter] per request
	DownBps float64       // bytes per second, 0 = unlimited
	UpBps   float64
	Quantum int
	TLS     bool
	Seed    int64
	// A server slower than S3 (a small self-hosted store, or S3 in a
	// throttling burst that queues): Workers requests are served at once,
	// each taking Service, the rest wait in FIFO order. 0: no such limit.
	Workers int
	Service time.Duration
}

// passThrough: nothing to emulate (lan): connections bypass the emulator.
func (c linkConfig) passThrough() bool {
	return c.RTT == 0 && c.Jitter == 0 && c.DownBps == 0 && c.UpBps == 0 && c.Service == 0
}

type chunk struct {
	b   []byte
	off int // bytes of b already written
}

type evKind uint8

const (
	evDeliver  evKind = iota // ck is due at the client: write it
	evActivate               // c's response may enter the link
	evWake                   // wake a waiting handler
)

type event struct {
	due  int64
	seq  uint64
	kind evKind
	c    *linkConn
	ck   *chunk
}

// eventHeap: a min-heap on (due, seq), by value (no allocation per event).
type eventHeap []event

func (h eventHeap) less(i, j int) bool {
	return h[i].due < h[j].due || (h[i].due == h[j].due && h[i].seq < h[j].seq)
}

func (h *eventHeap) push(e event) {
	*h = append(*h, e)
	a := *h
	i := len(a) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !a.less(i, p) {
			break
		}
		a[i], a[p] = a[p], a[i]
		i = p
	}
}

func (h *eventHeap) pop() event {
	a := *h
	top := a[0]
	n := len(a) - 1
	a[0] = a[n]
	a[n] = event{}
	a = a[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && a.less(r, l) {
			m = r
		}
		if !a.less(m, i) {
			break
		}
		a[i], a[m] = a[m], a[i]
		i = m
	}
	*h = a
	return top
}

type delivery struct {
	c  *linkConn
	ck *chunk
}

type emulator struct {
	cfg         linkConfig
	nsPerByte   float64 // downstream; 0 = unlimited
	upNsPerByte float64
	st          *stats

	rngMu sync.Mutex
	rng   *rand.Rand

	mu        sync.Mutex
	busyUntil int64
	ring      []*linkConn // responses with bytes waiting for the link, FIFO from ringHead
	ringHead  int
	events    eventHeap
	seq       uint64
	planned   int64 // when run() looks next (MaxInt64: waiting for a kick)
	window    int64 // events due up to now+window are handled now
	kick      chan struct{}

	upMu   sync.Mutex
	upBusy int64

	svcMu      sync.Mutex
	workerFree []int64 // when each of cfg.Workers is free (ns), when Service > 0

	// Timing accuracy of handled events (under mu): handled minus due.
	errSum, errCount, errMax, errMin int64

	chunkPool sync.Pool
}

func newEmulator(cfg linkConfig, st *stats) *emulator {
	if cfg.Quantum <= 0 {
		cfg.Quantum = 16 << 10
	}
	e := &emulator{cfg: cfg, st: st, rng: rand.New(rand.NewSource(cfg.Seed)),
		planned: math.MaxInt64, window: initialWindow, kick: make(chan struct{}, 1)}
	if cfg.Service > 0 {
		w := cfg.Workers
		if w <= 0 {
			w = 1
		}
		e.workerFree = make([]int64, w)
	}
	if cfg.DownBps > 0 {
		e.nsPerByte = 1e9 / cfg.DownBps
	}
	if cfg.UpBps > 0 {
		e.upNsPerByte = 1e9 / cfg.UpBps
	}
	q := cfg.Quantum
	e.chunkPool.New = func() interface{} { return &chunk{b: make([]byte, 0, q)} }
	go e.run()
	return e
}

// timing: how early (negative) or late events were handled, in µs, and the
// current batching window; reset zeroes it.
func (e *emulator) timing(reset bool) map[string]interface{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	m := map[string]interface{}{"events": e.errCount, "window_us": e.window / 1000,
		"max_us": e.errMax / 1000, "min_us": e.errMin / 1000, "mean_us": 0.0}
	if e.errCount > 0 {
		m["mean_us"] = float64(e.errSum) / float64(e.errCount) / 1000
	}
	if reset {
		e.errSum, e.errCount, e.errMax, e.errMin = 0, 0, 0, 0
	}
	return m
}

func (e *emulator) getChunk() *chunk { return e.chunkPool.Get().(*chunk) }

func (e *emulator) putChunk(ck *chunk) {
	ck.b = ck.b[:0]
	ck.off = 0
	e.chunkPool.Put(ck)
}

// drawOneway: this request's RTT (drawn uniformly within the jitter), halved.
// serve: a request that reaches the server at t is answered when a worker
// has spent Service on it, after the requests that reached it before (FIFO
// over the earliest free worker); without a service time, at t.
func (e *emulator) serve(t int64) int64 {
	if e.cfg.Service <= 0 {
		return t
	}
	e.svcMu.Lock()
	best := 0
	for i, f := range e.workerFree {
		if f < e.workerFree[best] {
			best = i
		}
	}
	start := e.workerFree[best]
	if start < t {
		start = t
	}
	end := start + int64(e.cfg.Service)
	e.workerFree[best] = end
	e.svcMu.Unlock()
	return end
}

func (e *emulator) drawOneway() int64 {
	rtt := int64(e.cfg.RTT)
	if j := int64(e.cfg.Jitter); j > 0 {
		e.rngMu.Lock()
		rtt += e.rng.Int63n(2*j+1) - j
		e.rngMu.Unlock()
	}
	if rtt < 0 {
		rtt = 0
	}
	return rtt / 2
}

func (e *emulator) kickLocked(at int64) {
	if at < e.planned {
		e.planned = at
		select {
		case e.kick <- struct{}{}:
		default:
		}
	}
}

// pushEventLocked adds an event and kicks run() when it is due before run()
// planned to look. e.mu held.
func (e *emulator) pushEventLocked(ev event) {
	e.seq++
	ev.seq = e.seq
	e.events.push(ev)
	e.kickLocked(ev.due - e.window)
}

func (e *emulator) ringPushLocked(c *linkConn) {
	c.inRing = true
	e.ring = append(e.ring, c)
	if len(e.ring)-e.ringHead == 1 {
		e.kickLocked(e.busyUntil - lookahead/2)
	}
}

func (e *emulator) ringPopLocked() *linkConn {
	c := e.ring[e.ringHead]
	e.ring[e.ringHead] = nil
	e.ringHead++
	if e.ringHead == len(e.ring) {
		e.ring = e.ring[:0]
		e.ringHead = 0
	} else if e.ringHead > 1024 && e.ringHead*2 > len(e.ring) {
		n := copy(e.ring, e.ring[e.ringHead:])
		for i := n; i < len(e.ring); i++ {
			e.ring[i] = nil
		}
		e.ring = e.ring[:n]
		e.ringHead = 0
	}
	return c
}

// sleepUntil blocks the caller (a handler of c) until due, on run()'s clock.
func (e *emulator) sleepUntil(c *linkConn, due int64) {
	if due <= monoNow() {
		return
	}
	e.mu.Lock()
	e.pushEventLocked(event{due: due, kind: evWake, c: c})
	e.mu.Unlock()
	<-c.wake
}

// reserveUp: the time n request-body bytes have crossed the upstream link.
func (e *emulator) reserveUp(n int) int64 {
	now := monoNow()
	e.upMu.Lock()
	if e.upBusy < now {
		e.upBusy = now
	}
	e.upBusy += int64(float64(n) * e.upNsPerByte)
	t := e.upBusy
	e.upMu.Unlock()
	return t
}

// step handles every event due by now+window, then assigns link departures
// to the responses waiting for it. Returns when run() should look again
// (MaxInt64: nothing to do until a kick), wake-ups to send and chunks to
// write. e.mu held.
func (e *emulator) step(now int64, wakes []*linkConn, dl []delivery) (int64, []*linkConn, []delivery) {
	limit := now + e.window
	for {
		for len(e.events) > 0 && e.events[0].due <= limit {
			ev := e.events.pop()
			c := ev.c
			if d := now - ev.due; ev.kind != evWake {
				e.errSum += d
				e.errCount++
				if d > e.errMax {
					e.errMax = d
				}
				if d < e.errMin {
					e.errMin = d
				}
			}
			switch ev.kind {
			case evWake:
				wakes = append(wakes, c)
			case evActivate:
				c.activating = false
				if len(c.pending) > 0 && !c.inRing && !c.dead {
					c.inRing = true
					e.ring = append(e.ring, c)
				}
			case evDeliver:
				switch {
				case c.dead:
					c.inflight--
					e.putChunk(ev.ck)
					if c.closing && c.inflight == 0 {
						dl = append(dl, delivery{c: c}) // close it
					}
				case c.writerBusy || !c.direct:
					c.ready = append(c.ready, ev.ck)
					if !c.writerBusy {
						c.writerBusy = true
						dl = append(dl, delivery{c: c}) // signal its writer
					}
				default:
					dl = append(dl, delivery{c: c, ck: ev.ck})
				}
			}
		}
		if e.nsPerByte == 0 || len(e.ring) == e.ringHead {
			break
		}
		// After a stall of run() the link catches up on at most maxCatchUp.
		if e.busyUntil < now-maxCatchUp {
			e.busyUntil = now - maxCatchUp
		}
		scheduled := false
		for len(e.ring) > e.ringHead && e.busyUntil <= now+lookahead {
			c := e.ringPopLocked()
			c.inRing = false
			if c.dead || len(c.pending) == 0 {
				continue
			}
			ck := c.pending[0]
			c.pending[0] = nil
			c.pending = c.pending[1:]
			c.pendingBytes -= len(ck.b)
			// An idle link starts sending when the response became
			// eligible, not when run() got to it.
			if e.busyUntil < c.eligible {
				e.busyUntil = c.eligible
			}
			e.busyUntil += int64(float64(len(ck.b)) * e.nsPerByte)
			due := e.busyUntil + c.oneway
			if due < c.lastDue {
				due = c.lastDue
			}
			c.lastDue = due
			c.inflight++
			e.seq++
			e.events.push(event{due: due, seq: e.seq, kind: evDeliver, c: c, ck: ck})
			if due <= limit {
				scheduled = true
			}
			if c.writersWaiting > 0 && c.pendingBytes < maxPending {
				c.cond.Broadcast()
			}
			if len(c.pending) > 0 {
				c.inRing = true
				e.ring = append(e.ring, c)
			}
		}
		if !scheduled {
			break
		}
	}
	next := int64(math.MaxInt64)
	if len(e.events) > 0 {
		next = e.events[0].due - e.window
	}
	if e.nsPerByte > 0 && len(e.ring) > e.ringHead {
		// Scheduled up to now+lookahead: refill when half of it is used.
		if t := e.busyUntil - lookahead/2; t < next {
			next = t
		}
	}
	return next, wakes, dl
}

func (e *emulator) run() {
	timer := time.NewTimer(time.Hour)
	if !timer.Stop() {
		<-timer.C
	}
	var wakes []*linkConn
	var dl []delivery
	timerPlanned := int64(-1)     // the planned time of an armed timer that fired
	armed := int64(math.MaxInt64) // when the armed timer fires (MaxInt64: not armed)
	for {
		e.mu.Lock()
		now := monoNow()
		if timerPlanned >= 0 {
			// Calibrate the window to how late the timer fires: events
			// are then handled early by about as much as the wake-up is
			// late, so on average on time.
			late := now - timerPlanned
			if late < 0 {
				late = 0
			}
			w := e.window + (late-e.window)/16
			if w < minWindow {
				w = minWindow
			}
			if w > maxWindow {
				w = maxWindow
			}
			e.window = w
			timerPlanned = -1
		}
		var next int64
		next, wakes, dl = e.step(now, wakes[:0], dl[:0])
		if next <= now {
			e.planned = now
		} else {
			e.planned = next
		}
		e.mu.Unlock()
		for i, c := range wakes {
			select {
			case c.wake <- struct{}{}:
			default:
			}
			wakes[i] = nil
		}
		if len(dl) > 0 {
			e.deliver(dl)
			for i := range dl {
				dl[i] = delivery{}
			}
		}
		if next <= now {
			continue
		}
		if next == math.MaxInt64 && armed == math.MaxInt64 {
			<-e.kick
			continue
		}
		// Re-arm only when the next look moved earlier: a timer that fires
		// early just costs a pass.
		if next < armed {
			if armed != math.MaxInt64 && !timer.Stop() {
				<-timer.C
			}
			timer.Reset(time.Duration(next - monoNow()))
			armed = next
		}
		select {
		case <-e.kick:
		case <-timer.C:
			timerPlanned = armed
			armed = math.MaxInt64
		}
	}
}

// deliver writes due chunks with non-blocking writes, in order; a socket
// that takes less hands the rest to its connection's writer goroutine.
// Entries without a chunk signal the writer (or close a drained, closed
// connection).
func (e *emulator) deliver(dl []delivery) {
	for _, d := range dl {
		c := d.c
		if d.ck == nil {
			e.mu.Lock()
			if c.dead && c.closing && c.inflight == 0 {
				e.mu.Unlock()
				c.closeSocket()
				continue
			}
			c.startWriterLocked()
			e.mu.Unlock()
			select {
			case c.wsig <- struct{}{}:
			default:
			}
			continue
		}
		if !c.blocked {
			c.tryWrite(d.ck)
		}
		e.mu.Lock()
		if c.blocked || c.dead {
			if c.dead {
				c.inflight--
				e.putChunk(d.ck)
			} else if d.ck.off < len(d.ck.b) {
				c.ready = append(c.ready, d.ck)
			} else {
				c.inflight--
				e.putChunk(d.ck)
			}
			if !c.dead && !c.writerBusy {
				c.writerBusy = true
				c.startWriterLocked()
				select {
				case c.wsig <- struct{}{}:
				default:
				}
			}
			if c.dead && c.closing && c.inflight == 0 {
				e.mu.Unlock()
				c.closeSocket()
				continue
			}
			e.mu.Unlock()
			continue
		}
		c.inflight--
		e.putChunk(d.ck)
		done := c.closing && c.inflight == 0 && len(c.pending) == 0
		e.mu.Unlock()
		if done {
			c.closeSocket()
		}
	}
	// Connections that filled up during this batch: their writer has them now.
	for _, d := range dl {
		if d.c.blocked {
			d.c.blocked = false
		}
	}
}
