// ratecli sends requests at a fixed rate (open loop), which wrk cannot: latency is measured
// from the time each request was due, so a server that falls behind shows it in p99 instead of
// slowing the client down. Standard library only; bench/run.sh builds it into .cache/.
//
//	ratecli -url https://127.0.0.1:PORT/mutate -body BODY.json -rate 1500 -d 5s [-c 16]
//
// Prints the RESULT line of bench/review.lua: requests duration_us p50_us p99_us errors non2xx.
package main

import (
	"bytes"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"sync"
	"time"
)

func main() {
	url := flag.String("url", "", "URL to POST (GET without -body)")
	bodyFile := flag.String("body", "", "request body file (application/json)")
	rate := flag.Float64("rate", 100, "requests per second")
	dur := flag.Duration("d", 5*time.Second, "duration")
	conns := flag.Int("c", 16, "connections at most")
	flag.Parse()
	var body []byte
	if *bodyFile != "" {
		var err error
		if body, err = os.ReadFile(*bodyFile); err != nil {
			fmt.Fprintln(os.Stderr, "ratecli:", err)
			os.Exit(2)
		}
	}
	tr := &http.Transport{
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: true}, // the bench's own dev cert
		MaxIdleConnsPerHost: *conns,
		MaxConnsPerHost:     *conns,
		ForceAttemptHTTP2:   false,
		TLSNextProto:        map[string]func(string, *tls.Conn) http.RoundTripper{},
	}
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}

	due := make(chan time.Time, 1<<16)
	var mu sync.Mutex
	var lat []time.Duration
	errors, non2xx := 0, 0
	var wg sync.WaitGroup
	for i := 0; i < *conns; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range due {
				var req *http.Request
				if body != nil {
					req, _ = http.NewRequest("POST", *url, bytes.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
				} else {
					req, _ = http.NewRequest("GET", *url, nil)
				}
				resp, err := client.Do(req)
				d := time.Since(t)
				mu.Lock()
				if err != nil {
					errors++
				} else {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode/100 != 2 {
						non2xx++
					}
					lat = append(lat, d)
				}
				mu.Unlock()
			}
		}()
	}
	interval := time.Duration(float64(time.Second) / *rate)
	start := time.Now()
	for i := 0; ; i++ {
		t := start.Add(time.Duration(i) * interval)
		if t.Sub(start) >= *dur {
			break
		}
		if w := time.Until(t); w > 0 {
			time.Sleep(w)
		}
		due <- t
	}
	close(due)
	wg.Wait()
	elapsed := time.Since(start)
	sort.Slice(lat, func(a, b int) bool { return lat[a] < lat[b] })
	pct := func(p float64) int64 {
		if len(lat) == 0 {
			return 0
		}
		return lat[int(float64(len(lat)-1)*p)].Microseconds()
	}
	fmt.Printf("RESULT requests=%d duration_us=%d p50_us=%d p99_us=%d errors=%d non2xx=%d\n",
		len(lat), elapsed.Microseconds(), pct(0.50), pct(0.99), errors, non2xx)
}
