// Drives go-retryablehttp with NewClient()'s defaults against the failing
// server. Usage: driver PRESET [sequential] < jobs, where each line of jobs is
// "URL TIMEOUT_MS START_MS" (the job starts START_MS after the driver, so
// concurrent trials do not fail and retry in lockstep); prints one JSON line
// per job. Built against Debian's
// golang-github-hashicorp-go-retryablehttp-dev (GOPATH mode, no module proxy).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	retryablehttp "github.com/hashicorp/go-retryablehttp"
)

type result struct {
	URL   string `json:"url"`
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

func call(url string, timeout time.Duration) result {
	c := retryablehttp.NewClient()
	c.Logger = nil
	c.HTTPClient.Timeout = timeout
	resp, err := c.Get(url)
	if err != nil {
		return result{URL: url, Error: err.Error()}
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode >= 400 {
		return result{URL: url, Error: fmt.Sprintf("status %d", resp.StatusCode)}
	}
	return result{URL: url, OK: true}
}

func main() {
	if os.Args[1] != "go-retryablehttp" {
		fmt.Fprintln(os.Stderr, "no Go driver for", os.Args[1])
		os.Exit(2)
	}
	sequential := len(os.Args) > 2 && os.Args[2] == "sequential"
	var jobs [][3]string
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 3 {
			jobs = append(jobs, [3]string{f[0], f[1], f[2]})
		}
	}
	out := make([]result, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		ms, _ := strconv.Atoi(j[1])
		start, _ := strconv.Atoi(j[2])
		run := func(i int, u string, d time.Duration) { out[i] = call(u, d) }
		if sequential {
			run(i, j[0], time.Duration(ms)*time.Millisecond)
			continue
		}
		wg.Add(1)
		go func(i int, u string, d time.Duration) {
			defer wg.Done()
			time.Sleep(time.Duration(start) * time.Millisecond)
			run(i, u, d)
		}(i, j[0], time.Duration(ms)*time.Millisecond)
	}
	wg.Wait()
	enc := json.NewEncoder(os.Stdout)
	for _, r := range out {
		enc.Encode(r)
	}
}
