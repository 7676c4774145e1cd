// benchs3: an in-memory S3-compatible server for loopback benchmarks.
//
// moto answers every ranged GET by reading the whole object, so a benchmark of
// ranged reads against it measures moto. This server keeps objects in memory
// (gofakes3 with its s3mem backend) and slices ranges cheaply. It does not
// verify signatures; tests use moto, which does.
package main

import (
	"flag"
	"log"
	"net/http"
	"strings"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9000", "listen address (loopback only)")
	flag.Parse()
	if !strings.HasPrefix(*addr, "127.0.0.1:") && !strings.HasPrefix(*addr, "localhost:") {
		log.Fatalf("refusing to listen on %s: loopback only", *addr)
	}
	faker := gofakes3.New(s3mem.New())
	log.Printf("benchs3 listening on %s", *addr)
	log.Fatal(http.ListenAndServe(*addr, faker.Server()))
}
