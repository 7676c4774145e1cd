package main

// Counters, served as JSON at GET /__s3link/stats and zeroed by
// POST /__s3link/reset.

import (
	"encoding/json"
	"strconv"
	"sync/atomic"
	"time"
)

type reqKind int

const (
	kindGet reqKind = iota
	kindHead
	kindList
	kindPut
	kindOther
	nKinds
)

var kindNames = [nKinds]string{"get", "head", "list", "put", "other"}

type stats struct {
	requests   [nKinds]atomic.Int64
	status     [600]atomic.Int64
	slowdowns  atomic.Int64
	bytesBody  atomic.Int64 // response bodies
	bytesTotal atomic.Int64 // everything written to connections (status lines, headers, bodies)
	conns      atomic.Int64
	since      atomic.Int64 // unix ns of the last reset
}

func newStats() *stats {
	s := &stats{}
	s.since.Store(time.Now().UnixNano())
	return s
}

func (s *stats) countStatus(code int) {
	if code >= 0 && code < len(s.status) {
		s.status[code].Add(1)
	}
}

func (s *stats) reset() {
	for i := range s.requests {
		s.requests[i].Store(0)
	}
	for i := range s.status {
		s.status[i].Store(0)
	}
	s.slowdowns.Store(0)
	s.bytesBody.Store(0)
	s.bytesTotal.Store(0)
	s.conns.Store(0)
	s.since.Store(time.Now().UnixNano())
}

type statsDoc struct {
	Requests            map[string]int64       `json:"requests"`
	Status              map[string]int64       `json:"status"`
	SlowDown503         int64                  `json:"slowdown_503"`
	BytesSentBody       int64                  `json:"bytes_sent_body"`
	BytesSentTotal      int64                  `json:"bytes_sent_total"`
	ConnectionsAccepted int64                  `json:"connections_accepted"`
	Seconds             float64                `json:"seconds"`
	Link                map[string]interface{} `json:"link"`
	LinkTiming          map[string]interface{} `json:"link_timing,omitempty"`
	GetRate             float64                `json:"get_rate"`
	PutRate             float64                `json:"put_rate"`
}

func (s *stats) json(link, timing map[string]interface{}, getRate, putRate float64) []byte {
	d := statsDoc{Requests: map[string]int64{}, Status: map[string]int64{}, Link: link, LinkTiming: timing,
		GetRate: getRate, PutRate: putRate}
	for i := range s.requests {
		d.Requests[kindNames[i]] = s.requests[i].Load()
	}
	for i := range s.status {
		if v := s.status[i].Load(); v != 0 {
			d.Status[strconv.Itoa(i)] = v
		}
	}
	d.SlowDown503 = s.slowdowns.Load()
	d.BytesSentBody = s.bytesBody.Load()
	d.BytesSentTotal = s.bytesTotal.Load()
	d.ConnectionsAccepted = s.conns.Load()
	d.Seconds = float64(time.Now().UnixNano()-s.since.Load()) / 1e9
	b, _ := json.MarshalIndent(d, "", " ")
	return append(b, '\n')
}
