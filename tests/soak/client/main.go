// soakclient: the load and flood clients of tests/soak (127.0.0.1 only, standard library only).
//
//	soakclient load  -addr 127.0.0.1:PORT -ca ca.crt -cases cases.json [-rate R] [-conns C]
//	                 [-duration D] [-reconnect N] [-samples FILE]
//	soakclient flood -addr 127.0.0.1:PORT -ca ca.crt [-slowloris 500] [-idle 2000] [-duration D]
//
// load posts AdmissionReviews over TLS keep-alive connections, at a fixed rate (open loop: the
// latency counts from the moment a request was due, so a stalled server shows as latency, not as
// fewer requests) or as fast as the connections go (-rate 0, to find the peak). Every answer is
// checked: HTTP 200, a decodable review, the uid echoed, and the decision the case expects under
// the policy the answer names in its `policy-hash` audit annotation. Prints one JSON summary on
// stdout; -samples writes one CSV line per request for the caller's own windows.
//
// flood opens slowloris connections (TLS, then a request head one byte per -byte-interval) and
// idle TLS connections (handshake, then nothing), and reopens each one the server closes, until
// -duration ends. Prints one JSON summary with a per-second timeline of open connections.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: soakclient load|flood [flags]")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "load":
		os.Exit(load(os.Args[2:]))
	case "flood":
		os.Exit(flood(os.Args[2:]))
	default:
		fmt.Fprintf(os.Stderr, "soakclient: unknown command %q (load, flood)\n", os.Args[1])
		os.Exit(2)
	}
}

// setup refuses any address but a loopback one and makes the TLS configuration.
func setup(addr, caFile string) (*tlsTracker, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("%s: only loopback addresses are allowed", addr)
	}
	return newTLS(caFile)
}

// tlsTracker is a client TLS configuration that trusts the test CA and records every handshake
// and the serial numbers of the certificates the server presented.
type tlsTracker struct {
	cfg        *tls.Config
	handshakes atomic.Int64
	mu         sync.Mutex
	serials    map[string]int64
}

func newTLS(caFile string) (*tlsTracker, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s: no certificate", caFile)
	}
	t := &tlsTracker{serials: map[string]int64{}}
	t.cfg = &tls.Config{
		RootCAs:    pool,
		ServerName: "localhost",
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"http/1.1"},
		VerifyConnection: func(cs tls.ConnectionState) error {
			t.handshakes.Add(1)
			if len(cs.PeerCertificates) > 0 {
				s := cs.PeerCertificates[0].SerialNumber.Text(16)
				t.mu.Lock()
				t.serials[s]++
				t.mu.Unlock()
			}
			return nil
		},
	}
	return t, nil
}

// ------------------------------------------------------------------------------------- load

type expectation struct {
	Allowed bool `json:"allowed"`
	Patched bool `json:"patched"`
}

type reviewCase struct {
	Name     string                 `json:"name"`
	Endpoint string                 `json:"endpoint"`
	Body     json.RawMessage        `json:"body"`
	Expect   map[string]expectation `json:"expect"` // by policy hash; empty: any decision
	uid      string
}

type answer struct {
	Response struct {
		UID     string            `json:"uid"`
		Allowed *bool             `json:"allowed"`
		Patch   string            `json:"patch"`
		Audit   map[string]string `json:"auditAnnotations"`
		Status  *struct {
			Code int `json:"code"`
		} `json:"status"`
	} `json:"response"`
}

type sample struct {
	due, done     time.Time
	sent          time.Time
	class         string // "ok" or the failure class
	detail        string
	caseIdx       int
	hash          string
	newConnection bool
	worker        int
}

type failureRecord struct {
	At     float64 `json:"at_s"`
	Case   string  `json:"case"`
	Class  string  `json:"class"`
	Detail string  `json:"detail"`
}

// histogram counts latencies in microseconds in buckets 1 % wide: percentiles within 1 %, in
// constant memory however long the run.
type histogram struct {
	counts []int64
	n      int64
	max    float64
}

const bucketGrowth = 1.01

func newHistogram() *histogram { return &histogram{counts: make([]int64, 2100)} }

func (h *histogram) add(us float64) {
	i := 0
	if us > 1 {
		i = int(math.Log(us) / math.Log(bucketGrowth))
	}
	if i >= len(h.counts) {
		i = len(h.counts) - 1
	}
	h.counts[i]++
	h.n++
	h.max = math.Max(h.max, us)
}

// quantile in milliseconds: the upper edge of the bucket holding the p-th percentile.
func (h *histogram) quantile(p float64) float64 {
	if h.n == 0 {
		return 0
	}
	rank := int64(math.Ceil(p / 100 * float64(h.n)))
	if rank < 1 {
		rank = 1
	}
	var seen int64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return math.Min(math.Pow(bucketGrowth, float64(i+1)), h.max) / 1000
		}
	}
	return h.max / 1000
}

type window struct {
	From    float64 `json:"from_s"`
	Reqs    int64   `json:"requests"`
	Failed  int64   `json:"failed"`
	P50     float64 `json:"p50_ms"`
	P99     float64 `json:"p99_ms"`
	DueP99  float64 `json:"due_p99_ms"`
	service *histogram
	due     *histogram
}

func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p / 100 * float64(len(sorted)-1))
	return sorted[i]
}

func load(args []string) int {
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	addr := fs.String("addr", "", "server address (loopback only)")
	caFile := fs.String("ca", "", "CA certificate file")
	casesFile := fs.String("cases", "", "JSON file: [{name, endpoint, body, expect: {hash: {allowed, patched}}}]")
	rate := fs.Float64("rate", 0, "requests per second in all (0: as fast as the connections go)")
	conns := fs.Int("conns", 8, "keep-alive connections (one worker each)")
	duration := fs.Duration("duration", 10*time.Second, "how long to send")
	reconnect := fs.Int("reconnect", 0, "requests per connection before it is closed and reopened (0: keep)")
	timeout := fs.Duration("timeout", 10*time.Second, "per-request timeout")
	samplesFile := fs.String("samples", "", "write one CSV line per request here")
	windowLen := fs.Duration("window", 10*time.Second, "report percentiles per window of this length")
	fs.Parse(args)
	tracker, err := setup(*addr, *caFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soakclient:", err)
		return 2
	}
	raw, err := os.ReadFile(*casesFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soakclient:", err)
		return 2
	}
	var cases []reviewCase
	if err := json.Unmarshal(raw, &cases); err != nil || len(cases) == 0 {
		fmt.Fprintln(os.Stderr, "soakclient: cases:", err, "(need at least one case)")
		return 2
	}
	for i := range cases {
		var r struct {
			Request struct {
				UID string `json:"uid"`
			} `json:"request"`
		}
		if err := json.Unmarshal(cases[i].Body, &r); err != nil || r.Request.UID == "" {
			fmt.Fprintf(os.Stderr, "soakclient: case %s: body without request.uid\n", cases[i].Name)
			return 2
		}
		cases[i].uid = r.Request.UID
	}

	start := time.Now()
	end := start.Add(*duration)
	samples := make(chan sample, 65536)
	var next atomic.Int64 // round robin over the cases
	var dropped atomic.Int64

	type token struct{ due time.Time }
	var tokens chan token
	if *rate > 0 {
		// A short queue: a client starved of CPU drops (and counts) requests instead of
		// queueing seconds of them, which would be its own delay reported as the server's.
		tokens = make(chan token, *conns)
		go func() {
			interval := time.Duration(float64(time.Second) / *rate)
			for i := int64(0); ; i++ {
				due := start.Add(time.Duration(i) * interval)
				if !due.Before(end) {
					break
				}
				if d := time.Until(due); d > 0 {
					time.Sleep(d)
				}
				select {
				case tokens <- token{due}:
				default:
					dropped.Add(1) // every worker busy and the queue full: the rate was not held
				}
			}
			close(tokens)
		}()
	}

	var wg sync.WaitGroup
	for w := 0; w < *conns; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var opened atomic.Bool
			transport := &http.Transport{
				TLSClientConfig:     tracker.cfg,
				MaxIdleConnsPerHost: 1,
				MaxConnsPerHost:     1,
				ForceAttemptHTTP2:   false,
				DisableCompression:  true,
				DialContext: func(ctx context.Context, network, a string) (net.Conn, error) {
					opened.Store(true)
					return (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, network, a)
				},
			}
			defer transport.CloseIdleConnections()
			client := &http.Client{Transport: transport, Timeout: *timeout}
			n := 0
			for {
				var due time.Time
				if tokens != nil {
					t, ok := <-tokens
					if !ok {
						return
					}
					due = t.due
				} else {
					due = time.Now()
					if !due.Before(end) {
						return
					}
				}
				i := int(next.Add(1)-1) % len(cases)
				opened.Store(false)
				s := doRequest(client, *addr, &cases[i], i)
				s.due, s.newConnection, s.worker = due, opened.Load(), w
				samples <- s
				n++
				if *reconnect > 0 && n%*reconnect == 0 {
					transport.CloseIdleConnections()
				}
			}
		}(w)
	}
	go func() { wg.Wait(); close(samples) }()

	var csv *bufio.Writer
	if *samplesFile != "" {
		f, err := os.Create(*samplesFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "soakclient:", err)
			return 2
		}
		defer f.Close()
		csv = bufio.NewWriterSize(f, 1<<20)
		defer csv.Flush()
		fmt.Fprintln(csv, "due_s,latency_us,service_us,class,case,new_connection")
	}
	service, due := newHistogram(), newHistogram()
	var windows []*window
	classes := map[string]int64{}
	hashes := map[string]int64{}
	failures := []failureRecord{}
	var total, ok int64
	var last time.Time
	for s := range samples {
		total++
		classes[s.class]++
		if s.hash != "" {
			hashes[s.hash]++
		}
		at := s.due.Sub(start)
		wi := int(at / *windowLen)
		for len(windows) <= wi {
			windows = append(windows, &window{From: (time.Duration(len(windows)) * *windowLen).Seconds(),
				service: newHistogram(), due: newHistogram()})
		}
		w := windows[wi]
		w.Reqs++
		lat := float64(s.done.Sub(s.due).Microseconds())
		svc := float64(s.done.Sub(s.sent).Microseconds())
		if s.class == "ok" {
			ok++
			service.add(svc)
			due.add(lat)
			w.service.add(svc)
			w.due.add(lat)
		} else {
			w.Failed++
			if len(failures) < 50 {
				failures = append(failures, failureRecord{at.Seconds(), cases[s.caseIdx].Name, s.class, s.detail})
			}
		}
		if s.done.After(last) {
			last = s.done
		}
		if csv != nil {
			nc := 0
			if s.newConnection {
				nc = 1
			}
			fmt.Fprintf(csv, "%.6f,%.0f,%.0f,%s,%d,%d\n", at.Seconds(), lat, svc, s.class, s.caseIdx, nc)
		}
	}
	for _, w := range windows {
		w.P50, w.P99, w.DueP99 = w.service.quantile(50), w.service.quantile(99), w.due.quantile(99)
	}
	elapsed := last.Sub(start).Seconds()
	if elapsed <= 0 {
		elapsed = duration.Seconds()
	}
	tracker.mu.Lock()
	serials := make([]string, 0, len(tracker.serials))
	for s := range tracker.serials {
		serials = append(serials, s)
	}
	tracker.mu.Unlock()
	sort.Strings(serials)
	summary := map[string]any{
		"start_unix":         float64(start.UnixNano()) / 1e9,
		"requests":           total,
		"ok":                 ok,
		"failed":             total - ok,
		"classes":            classes,
		"failures":           failures,
		"dropped":            dropped.Load(),
		"seconds":            elapsed,
		"rate":               float64(total) / elapsed,
		"target_rate":        *rate,
		"connections":        *conns,
		"handshakes":         tracker.handshakes.Load(),
		"certificates_seen":  serials,
		"policy_hashes_seen": hashes,
		"p50_ms":             service.quantile(50),
		"p99_ms":             service.quantile(99),
		"max_ms":             service.max / 1000,
		"due_p50_ms":         due.quantile(50),
		"due_p99_ms":         due.quantile(99),
		"windows":            windows,
	}
	out, _ := json.MarshalIndent(summary, "", "  ")
	fmt.Println(string(out))
	return 0
}

func doRequest(client *http.Client, addr string, c *reviewCase, idx int) sample {
	s := sample{caseIdx: idx, sent: time.Now()}
	fail := func(class, detail string) sample {
		s.done, s.class, s.detail = time.Now(), class, detail
		return s
	}
	req, err := http.NewRequest("POST", "https://"+addr+c.Endpoint, bytes.NewReader(c.Body))
	if err != nil {
		return fail("client", err.Error())
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		class := "transport"
		var certErr *tls.CertificateVerificationError
		if errors.As(err, &certErr) || strings.Contains(err.Error(), "tls:") {
			class = "tls"
		}
		return fail(class, err.Error())
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return fail("transport", "reading the body: "+err.Error())
	}
	if resp.StatusCode != 200 {
		return fail(fmt.Sprintf("http-%d", resp.StatusCode), truncate(string(body)))
	}
	var a answer
	if err := json.Unmarshal(body, &a); err != nil {
		return fail("json", err.Error()+": "+truncate(string(body)))
	}
	r := a.Response
	s.hash = r.Audit["policy-hash"]
	if r.UID != c.uid {
		return fail("uid", fmt.Sprintf("uid %q, sent %q", r.UID, c.uid))
	}
	if r.Allowed == nil {
		return fail("decision", "no response.allowed")
	}
	if len(c.Expect) > 0 {
		want, known := c.Expect[s.hash]
		if !known {
			return fail("unknown-policy", fmt.Sprintf("policy-hash %q is neither policy", s.hash))
		}
		patched := r.Patch != ""
		if *r.Allowed != want.Allowed || patched != want.Patched {
			return fail("decision", fmt.Sprintf("allowed=%v patched=%v under policy %s, expected allowed=%v patched=%v",
				*r.Allowed, patched, s.hash, want.Allowed, want.Patched))
		}
		if !*r.Allowed && (r.Status == nil || r.Status.Code != 403) {
			return fail("decision", "a denial without status.code 403")
		}
	}
	s.done, s.class = time.Now(), "ok"
	return s
}

func truncate(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// ------------------------------------------------------------------------------------ flood

type floodCounters struct {
	open          atomic.Int64 // handshaken and held now
	opened        atomic.Int64 // handshakes completed
	dialFailed    atomic.Int64 // TCP connect refused or timed out
	tlsFailed     atomic.Int64 // TCP connected, TLS handshake failed or timed out
	closedByPeer  atomic.Int64 // the server closed a held connection
	answered      atomic.Int64 // (slowloris) the server answered the partial head before closing
	bytesTrickled atomic.Int64
	lifetimeMu    sync.Mutex
	lifetimes     []float64 // seconds a connection was held before the server closed it
}

func (c *floodCounters) lifetime(d time.Duration) {
	c.lifetimeMu.Lock()
	c.lifetimes = append(c.lifetimes, d.Seconds())
	c.lifetimeMu.Unlock()
}

func (c *floodCounters) report() map[string]any {
	c.lifetimeMu.Lock()
	l := append([]float64(nil), c.lifetimes...)
	c.lifetimeMu.Unlock()
	sort.Float64s(l)
	return map[string]any{
		"handshakes":            c.opened.Load(),
		"dial_failed":           c.dialFailed.Load(),
		"tls_failed":            c.tlsFailed.Load(),
		"closed_by_server":      c.closedByPeer.Load(),
		"answered_before_close": c.answered.Load(),
		"bytes_trickled":        c.bytesTrickled.Load(),
		"held_s_p50":            percentile(l, 50),
		"held_s_max":            percentile(l, 100),
		"open_at_end_of_flood":  c.open.Load(),
	}
}

func dialTLS(ctx context.Context, addr string, cfg *tls.Config, c *floodCounters) (*tls.Conn, error) {
	d := net.Dialer{Timeout: 5 * time.Second}
	raw, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		c.dialFailed.Add(1)
		return nil, err
	}
	conn := tls.Client(raw, cfg)
	hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := conn.HandshakeContext(hctx); err != nil {
		raw.Close()
		if ctx.Err() == nil {
			c.tlsFailed.Add(1)
		}
		return nil, err
	}
	c.opened.Add(1)
	return conn, nil
}

// hold keeps conn until the server closes it (returns true) or ctx ends (false). trickle, when
// not nil, is written one byte per interval meanwhile.
func hold(ctx context.Context, conn *tls.Conn, trickle []byte, interval time.Duration, c *floodCounters) bool {
	c.open.Add(1)
	defer c.open.Add(-1)
	began := time.Now()
	closed := make(chan bool, 1)
	go func() {
		buf := make([]byte, 4096)
		n, _ := conn.Read(buf) // blocks until the server answers or closes
		closed <- n > 0
	}()
	var tick <-chan time.Time
	if trickle != nil {
		t := time.NewTicker(interval)
		defer t.Stop()
		tick = t.C
	}
	i := 0
	for {
		select {
		case <-ctx.Done():
			conn.Close()
			return false
		case answered := <-closed:
			conn.Close()
			if ctx.Err() != nil {
				return false
			}
			c.closedByPeer.Add(1)
			if answered {
				c.answered.Add(1)
			}
			c.lifetime(time.Since(began))
			return true
		case <-tick:
			conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
			if _, err := conn.Write(trickle[i%len(trickle) : i%len(trickle)+1]); err != nil {
				// Wait for the reader to see the close (or ctx) so the count stays in one place.
				tick = nil
				continue
			}
			c.bytesTrickled.Add(1)
			i++
		}
	}
}

func flood(args []string) int {
	fs := flag.NewFlagSet("flood", flag.ExitOnError)
	addr := fs.String("addr", "", "server address (loopback only)")
	caFile := fs.String("ca", "", "CA certificate file")
	slow := fs.Int("slowloris", 500, "slowloris connections")
	idle := fs.Int("idle", 2000, "idle TLS connections")
	duration := fs.Duration("duration", 60*time.Second, "how long to keep the flood up")
	interval := fs.Duration("byte-interval", time.Second, "slowloris: one byte of the head per interval")
	ramp := fs.Int("ramp", 500, "new connections per second while the flood builds up")
	fs.Parse(args)
	tracker, err := setup(*addr, *caFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soakclient:", err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), *duration)
	defer cancel()
	var slowC, idleC floodCounters
	// A head that never ends: a header line, then one long header value.
	head := []byte("POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nX-Slow: ")
	filler := bytes.Repeat([]byte("a"), 1<<16)
	trickle := append(head, filler...)

	start := time.Now()
	var wg sync.WaitGroup
	pace := time.NewTicker(time.Second / time.Duration(*ramp))
	worker := func(trickled bool, c *floodCounters) {
		defer wg.Done()
		for ctx.Err() == nil {
			conn, err := dialTLS(ctx, *addr, tracker.cfg, c)
			if err != nil {
				select { // the server refused or stalled: try again shortly
				case <-ctx.Done():
				case <-time.After(200 * time.Millisecond):
				}
				continue
			}
			var t []byte
			if trickled {
				t = trickle
			}
			hold(ctx, conn, t, *interval, c)
		}
	}
	type point struct {
		T          float64 `json:"t"`
		Slowloris  int64   `json:"slowloris_open"`
		Idle       int64   `json:"idle_open"`
		FailedSoFa int64   `json:"connect_failures"`
	}
	var timeline []point
	sampler := time.NewTicker(time.Second)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-sampler.C:
				timeline = append(timeline, point{time.Since(start).Seconds(), slowC.open.Load(), idleC.open.Load(),
					slowC.dialFailed.Load() + slowC.tlsFailed.Load() + idleC.dialFailed.Load() + idleC.tlsFailed.Load()})
			}
		}
	}()
	for i := 0; i < *slow+*idle && ctx.Err() == nil; i++ {
		<-pace.C
		wg.Add(1)
		total := *slow + *idle // slowloris spread evenly among the idle ones
		if (i+1)**slow/total > i**slow/total {
			go worker(true, &slowC)
		} else {
			go worker(false, &idleC)
		}
	}
	pace.Stop()
	<-ctx.Done()
	slowAtEnd, idleAtEnd := slowC.open.Load(), idleC.open.Load()
	wg.Wait()
	<-done
	var maxSlow, maxIdle int64
	for _, p := range timeline {
		maxSlow = max(maxSlow, p.Slowloris)
		maxIdle = max(maxIdle, p.Idle)
	}
	s, i := slowC.report(), idleC.report()
	s["open_at_end_of_flood"], i["open_at_end_of_flood"] = slowAtEnd, idleAtEnd
	s["max_open"], i["max_open"] = maxSlow, maxIdle
	out, _ := json.MarshalIndent(map[string]any{
		"seconds":   time.Since(start).Seconds(),
		"slowloris": s,
		"idle":      i,
		"timeline":  timeline,
	}, "", "  ")
	fmt.Println(string(out))
	return 0
}
