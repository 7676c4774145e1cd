package main

// S3's request-rate limit per prefix: a token bucket per (class, prefix),
// refilled at the rate, holding at most one second's worth. A "prefix" is
// the bucket plus the key up to its last '/' (for listings: the listed
// prefix up to its last '/').

import (
	"sync"
)

type limiter struct {
	rate float64 // requests per second; <= 0: no limit
	mu   sync.Mutex
	m    map[string]*tokenBucket
}

type tokenBucket struct {
	tokens float64
	last   int64
}

const maxLimiterPrefixes = 1 << 17

func newLimiter(rate float64) *limiter {
	return &limiter{rate: rate, m: make(map[string]*tokenBucket)}
}

// allow takes one token for prefix at time now (monoNow), if there is one.
func (l *limiter) allow(prefix string, now int64) bool {
	if l == nil || l.rate <= 0 {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.m[prefix]
	if b == nil {
		if len(l.m) >= maxLimiterPrefixes {
			// Forget idle prefixes (their buckets are full anyway).
			for k, v := range l.m {
				if float64(now-v.last)*l.rate/1e9 >= l.rate {
					delete(l.m, k)
				}
			}
			if len(l.m) >= maxLimiterPrefixes {
				l.m = make(map[string]*tokenBucket)
			}
		}
		b = &tokenBucket{tokens: l.rate, last: now}
		l.m[prefix] = b
	}
	if now > b.last {
		b.tokens += float64(now-b.last) * l.rate / 1e9
		if b.tokens > l.rate {
			b.tokens = l.rate
		}
		b.last = now
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}
