//go:build e2e

package e2e

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// browser is headless Chromium driven over the DevTools protocol on
// --remote-debugging-pipe (fd 3: commands in, fd 4: replies and events
// out, each message a JSON object ended by a NUL byte): a small client
// with the standard library, since neither chromedp nor rod is among the
// project's dependencies.
type browser struct {
	t       *testing.T
	cmd     *exec.Cmd
	in      *os.File // our end of fd 3
	mu      sync.Mutex
	nextID  int
	waiting map[int]chan cdpReply
	session string // the page's flat session
	done    chan struct{}
}

type cdpReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// chromium is the distribution's binary (Debian: apt-get install chromium),
// SITTER_E2E_CHROMIUM to name another; the test is skipped without one.
func chromium(t *testing.T) string {
	if p := os.Getenv("SITTER_E2E_CHROMIUM"); p != "" {
		return p
	}
	// Debian's /usr/bin/chromium is a wrapper script; the binary itself
	// keeps fds 3 and 4 for certain.
	for _, p := range []string{"/usr/lib/chromium/chromium", "/usr/lib/chromium-browser/chromium-browser"} {
		if exists(p) {
			return p
		}
	}
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	t.Skip("no Chromium: apt-get install -y chromium (.ci/run does)")
	return ""
}

func startBrowser(t *testing.T) *browser {
	t.Helper()
	// The browser is the test's instrument, not what it tests: one that
	// dies before it opens a page (seen once: "cdp Target.createTarget:
	// the browser exited") is started again, once.
	b, err := launchBrowser(t)
	if err != nil {
		t.Logf("starting the browser again: %v", err)
		if b, err = launchBrowser(t); err != nil {
			t.Fatal(err)
		}
	}
	b.call(b.session, "Page.enable", nil, nil)
	b.call(b.session, "Runtime.enable", nil, nil)
	b.call(b.session, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 1500, "height": 1000, "deviceScaleFactor": 1, "mobile": false}, nil)
	return b
}

// launchBrowser starts headless Chromium and attaches to a blank page; the
// error carries the end of the browser's stderr.
func launchBrowser(t *testing.T) (*browser, error) {
	t.Helper()
	cmdR, cmdW, err := os.Pipe() // we write commands; Chromium reads fd 3
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe() // Chromium writes fd 4; we read
	if err != nil {
		t.Fatal(err)
	}
	profile := t.TempDir()
	cmd := exec.Command(chromium(t), "--headless=new", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
		"--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-dev-shm-usage",
		"--user-data-dir="+profile, "--window-size=1500,1000", "about:blank")
	cmd.ExtraFiles = []*os.File{cmdR, outW}
	stderr := &tailBuffer{max: 4 << 10}
	cmd.Stderr = stderr
	if os.Getenv("SITTER_E2E_VERBOSE") == "1" {
		cmd.Stderr = io.MultiWriter(os.Stderr, stderr)
	}
	// Chromium in its own process group: its helpers (zygote, renderers,
	// crashpad) outlive a killed browser process and go on writing the
	// profile, which t.TempDir's clean-up then cannot remove.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cmdR.Close()
	outW.Close()
	b := &browser{t: t, cmd: cmd, in: cmdW, waiting: map[int]chan cdpReply{}, done: make(chan struct{})}
	go b.read(outR)
	t.Cleanup(func() {
		// Closed through the protocol the browser ends its helpers and
		// flushes the profile; the group is killed all the same after.
		b.try("", "Browser.close", nil, nil)
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
		}
		b.in.Close()
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	})
	var target struct {
		TargetID string `json:"targetId"`
	}
	if err := b.try("", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		return nil, fmt.Errorf("%v; its stderr ends: %s", err, stderr.String())
	}
	var att struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.try("", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att); err != nil {
		return nil, fmt.Errorf("%v; its stderr ends: %s", err, stderr.String())
	}
	b.session = att.SessionID
	return b, nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (w *tailBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b = append(w.b, p...)
	if len(w.b) > w.max {
		w.b = append(w.b[:0], w.b[len(w.b)-w.max:]...)
	}
	return len(p), nil
}

func (w *tailBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.b)
}

func (b *browser) read(r *os.File) {
	defer close(b.done)
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		msg, err := br.ReadBytes(0)
		if err != nil {
			return
		}
		var m struct {
			ID int `json:"id"`
			cdpReply
		}
		if json.Unmarshal(msg[:len(msg)-1], &m) != nil || m.ID == 0 {
			continue // an event
		}
		b.mu.Lock()
		ch := b.waiting[m.ID]
		delete(b.waiting, m.ID)
		b.mu.Unlock()
		if ch != nil {
			ch <- m.cdpReply
		}
	}
}

// call sends one command and decodes its result into out.
func (b *browser) call(session, method string, params any, out any) {
	b.t.Helper()
	if err := b.try(session, method, params, out); err != nil {
		b.t.Fatal(err)
	}
}

func (b *browser) try(session, method string, params any, out any) error {
	b.mu.Lock()
	b.nextID++
	id := b.nextID
	ch := make(chan cdpReply, 1)
	b.waiting[id] = ch
	b.mu.Unlock()
	msg := map[string]any{"id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if session != "" {
		msg["sessionId"] = session
	}
	raw, _ := json.Marshal(msg)
	if _, err := b.in.Write(append(raw, 0)); err != nil {
		return fmt.Errorf("cdp %s: %v", method, err)
	}
	select {
	case r := <-ch:
		if r.Error != nil {
			return fmt.Errorf("cdp %s: %s", method, r.Error.Message)
		}
		if out != nil {
			return json.Unmarshal(r.Result, out)
		}
		return nil
	case <-b.done:
		return fmt.Errorf("cdp %s: the browser exited", method)
	case <-time.After(90 * time.Second):
		// Chromium's first target can take long on a loaded CI machine
		// (30 s was missed twice at load 7+).
		return fmt.Errorf("cdp %s: no reply in 90 s", method)
	}
}

// navigate opens url and waits for its load.
func (b *browser) navigate(url string) {
	b.t.Helper()
	b.call(b.session, "Page.navigate", map[string]any{"url": url}, nil)
	b.waitFor("document.readyState === 'complete' && !!document.getElementById('main')", 10*time.Second)
}

// eval runs a JavaScript expression in the page and returns its value.
func (b *browser) eval(expr string) any {
	b.t.Helper()
	var r struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	b.call(b.session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &r)
	if r.Exception != nil {
		b.t.Fatalf("eval %s: %s", expr, r.Exception.Text)
	}
	return r.Result.Value
}

// waitFor polls a boolean expression every 25 ms; it returns how long it
// took to hold, and fails the test after limit.
func (b *browser) waitFor(expr string, limit time.Duration) time.Duration {
	b.t.Helper()
	start := time.Now()
	for {
		var r struct {
			Result struct {
				Value any `json:"value"`
			} `json:"result"`
		}
		if b.try(b.session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &r) == nil && r.Result.Value == true {
			return time.Since(start)
		}
		if time.Since(start) > limit {
			b.t.Fatalf("after %s the page still does not satisfy %s; it shows:\n%v", limit, expr, b.eval("document.body ? document.body.innerText : ''"))
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// key types one key into the page (a real keyboard event).
func (b *browser) key(k string) {
	b.t.Helper()
	down := map[string]any{"type": "keyDown", "key": k}
	switch {
	case k == "Enter":
		down["text"] = "\r"
	case len([]rune(k)) == 1: // a character; a named key (Escape) types none
		down["text"] = k
	}
	b.call(b.session, "Input.dispatchKeyEvent", down, nil)
	b.call(b.session, "Input.dispatchKeyEvent", map[string]any{"type": "keyUp", "key": k}, nil)
}

// screenshot writes a PNG of the page to dir/name.
func (b *browser) screenshot(dir, name string) string {
	b.t.Helper()
	var r struct {
		Data string `json:"data"`
	}
	// Right after a navigation Chromium may not have laid the page out
	// yet ("Cannot take screenshot with 0 width"): wait for the load, and
	// try again a few times.
	b.waitFor(`document.readyState === 'complete' && document.documentElement.scrollWidth > 0`, 10*time.Second)
	var err error
	for try := 0; try < 5; try++ {
		if err = b.try(b.session, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true}, &r); err == nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	png, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil {
		b.t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	return p
}
