// s3link: an S3-compatible endpoint for benchmarks that serves a directory
// as buckets and emulates the network link itself (round trips, jitter,
// shared bandwidth, connection set-up) and S3's per-prefix request-rate
// limit. A test tool, not part of sievefs. See README.md.
//
//	s3link --root DIR [--port 0] [--port-file PATH] [--profile lan|region|wan]
//	       [--rtt-ms MS] [--jitter-ms MS] [--mbit MBIT] [--up-mbit MBIT] [--seed N]
//	       [--get-rate 5500] [--put-rate 3500] [--tls --cert-out PATH] [--region R]
package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"syscall"
	"time"
)

type profile struct {
	rttMs, jitterMs, mbit float64
}

var profiles = map[string]profile{
	"lan":    {0, 0, 0},
	"region": {25, 0, 1000},
	"wan":    {200, 20, 150},
}

func main() {
	root := flag.String("root", "", "directory served: ROOT/BUCKET/KEY (created if missing)")
	port := flag.Int("port", 0, "TCP port on 127.0.0.1 (0: any free port)")
	portFile := flag.String("port-file", "", "write the chosen port here once listening")
	prof := flag.String("profile", "lan", "link profile: lan (nothing), region (RTT 25 ms, 1 Gbit/s), wan (RTT 200 ± 20 ms, 150 Mbit/s)")
	rttMs := flag.Float64("rtt-ms", 0, "round-trip time in ms (overrides the profile)")
	jitterMs := flag.Float64("jitter-ms", 0, "each request's RTT is drawn uniformly within ± this (overrides the profile)")
	mbit := flag.Float64("mbit", 0, "bandwidth per direction in Mbit/s, 0 = unlimited (overrides the profile)")
	upMbit := flag.Float64("up-mbit", -1, "upstream (request body) bandwidth in Mbit/s (default: as --mbit)")
	seed := flag.Int64("seed", 1, "seed of the jitter draws")
	quantum := flag.Int("quantum", 16<<10, "bytes a response sends per turn on the shared link")
	getRate := flag.Float64("get-rate", 5500, "GET/HEAD requests per second per prefix (0 = no limit)")
	workers := flag.Int("workers", 0, "with --service-ms: requests the server serves at once (default 1)")
	serviceMs := flag.Float64("service-ms", 0, "a slow server: each request takes this long on one of --workers, the rest wait in FIFO order (0: none)")
	putRate := flag.Float64("put-rate", 3500, "PUT/LIST/DELETE requests per second per prefix (0 = no limit)")
	useTLS := flag.Bool("tls", false, "serve HTTPS (HTTP/1.1) with a self-signed certificate generated at start")
	certOut := flag.String("cert-out", "", "with --tls: write the certificate (PEM) here")
	region := flag.String("region", "us-east-1", "region reported by GET ?location and HEAD bucket")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile (runtime/pprof) here until SIGTERM/SIGINT (diagnosis)")
	flag.Parse()
	if flag.NArg() != 0 || *root == "" {
		fmt.Fprintln(os.Stderr, "usage: s3link --root DIR [options] (s3link -h lists them)")
		os.Exit(2)
	}
	p, ok := profiles[*prof]
	if !ok {
		fmt.Fprintf(os.Stderr, "s3link: unknown profile %q (lan, region, wan)\n", *prof)
		os.Exit(2)
	}
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["rtt-ms"] {
		p.rttMs = *rttMs
	}
	if set["jitter-ms"] {
		p.jitterMs = *jitterMs
	}
	if set["mbit"] {
		p.mbit = *mbit
	}
	up := p.mbit
	if *upMbit >= 0 {
		up = *upMbit
	}
	if p.rttMs < 0 || p.jitterMs < 0 || p.mbit < 0 || p.jitterMs > p.rttMs || *quantum < 512 || *serviceMs < 0 || *workers < 0 {
		fmt.Fprintln(os.Stderr, "s3link: bad link parameters (negative, jitter above the RTT, or quantum < 512)")
		os.Exit(2)
	}
	if *useTLS && *certOut == "" {
		fmt.Fprintln(os.Stderr, "s3link: --tls needs --cert-out PATH (clients must trust the generated certificate)")
		os.Exit(2)
	}

	raiseFileLimit()
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	absRoot, err := filepath.Abs(*root)
	if err == nil {
		err = os.MkdirAll(absRoot, 0o755)
	}
	if err != nil {
		log.Fatalf("s3link: root: %v", err)
	}

	cfg := linkConfig{
		Name:    *prof,
		RTT:     time.Duration(p.rttMs * float64(time.Millisecond)),
		Jitter:  time.Duration(p.jitterMs * float64(time.Millisecond)),
		DownBps: p.mbit * 1e6 / 8,
		UpBps:   up * 1e6 / 8,
		Quantum: *quantum,
		TLS:     *useTLS,
		Seed:    *seed,
		Workers: *workers,
		Service: time.Duration(*serviceMs * float64(time.Millisecond)),
	}
	st := newStats()
	srv := &server{st: newStore(absRoot), stats: st, region: *region, hostID: []string{hostID()}}
	srv.getRL.Store(newLimiter(*getRate))
	srv.putRL.Store(newLimiter(*putRate))
	if !cfg.passThrough() {
		srv.em = newEmulator(cfg, st)
	}
	srv.link = map[string]interface{}{"profile": *prof, "rtt_ms": p.rttMs, "jitter_ms": p.jitterMs,
		"down_mbit": p.mbit, "up_mbit": up, "tls": *useTLS, "quantum": *quantum, "pass_through": cfg.passThrough(),
		"workers": *workers, "service_ms": *serviceMs}

	var tlsConf *tls.Config
	if *useTLS {
		if tlsConf, err = makeTLSConfig(*certOut); err != nil {
			log.Fatalf("s3link: TLS certificate: %v", err)
		}
	}

	ln, err := net.Listen("tcp4", "127.0.0.1:"+strconv.Itoa(*port))
	if err != nil {
		log.Fatalf("s3link: listen: %v", err)
	}
	addr := ln.Addr().(*net.TCPAddr)
	if *portFile != "" {
		if err := writeFileAtomic(*portFile, []byte(strconv.Itoa(addr.Port)+"\n"), 0o644); err != nil {
			log.Fatalf("s3link: port file: %v", err)
		}
	}
	scheme := "http"
	if *useTLS {
		scheme = "https"
	}
	fmt.Fprintf(os.Stderr, "s3link: %s://127.0.0.1:%d serving %s; link %s: RTT %g ms ± %g ms, %s down, %s up%s; "+
		"rate limit %g GET/s, %g PUT/LIST/s per prefix\n", scheme, addr.Port, absRoot, *prof, p.rttMs, p.jitterMs,
		mbitText(p.mbit), mbitText(up), map[bool]string{true: ", TLS", false: ""}[*useTLS], *getRate, *putRate)
	fmt.Printf("listening on 127.0.0.1:%d\n", addr.Port)
	os.Stdout.Sync()

	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			log.Fatalf("s3link: cpu profile: %v", err)
		}
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-sigs
		if *cpuProfile != "" {
			pprof.StopCPUProfile()
		}
		os.Exit(0)
	}()
	l := &listener{Listener: ln, em: srv.em, tls: tlsConf, st: st}
	if err := srv.serveListener(l); err != nil {
		log.Fatalf("s3link: %v", err)
	}
}

func mbitText(m float64) string {
	if m <= 0 {
		return "unlimited"
	}
	return fmt.Sprintf("%g Mbit/s", m)
}

// raiseFileLimit: RLIMIT_NOFILE to its hard limit, for 1024+ connections
// plus open files.
func raiseFileLimit() {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return
	}
	if rl.Cur < rl.Max {
		rl.Cur = rl.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
			fmt.Fprintf(os.Stderr, "s3link: cannot raise the open-file limit: %v\n", err)
		}
	}
	if rl.Cur < 4096 {
		fmt.Fprintf(os.Stderr, "s3link: open-file limit %d: fewer than about %d connections possible\n", rl.Cur, rl.Cur-64)
	}
}
