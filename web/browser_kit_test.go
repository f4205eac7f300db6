//go:build browser

package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// The kit of the tests that drive a real browser (Debian's chromium, headless, over the
// DevTools protocol) through the dashboard. A page's test opens it, clicks as a member
// would, asserts on the page's text and DOM, and takes its screenshot for the docs:
//
//	c := startChrome(t, d, true)
//	c.step("MyPage", func(t *testing.T) {
//		c.open(t, "/my/page")
//		if got := c.text(t, "h1"); got != "My page" { t.Errorf(...) }
//		c.shot(t, "my-page")
//	})
//
// Every step fails on any console error, uncaught exception or browser log error (a
// Content-Security-Policy violation shows there) the page caused.

// shotsDir is where screenshots go; empty: none. A relative directory is taken from the
// repository's root, so `-browser.shots docs/images/web` writes the docs' images.
var shotsDir = flag.String("browser.shots", "", "save a full-page PNG of each page the browser tests visit in `DIR`")

// browserEnvRequire makes a machine without a browser fail the tests instead of skipping them.
const browserEnvRequire = "KIOKU_REQUIRE_BROWSER"

// The screen the browser has: wide enough for the layout, and the size of the docs' images.
const viewWidth, viewHeight = 1100, 800

// walkTimeout bounds one walk through the dashboard, so a page that never loads fails the
// test with where it stopped rather than hanging it.
const walkTimeout = 90 * time.Second

// browserPath returns the browser to drive, or skips (fails, with KIOKU_REQUIRE_BROWSER=1)
// the test on a machine that has none.
func browserPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	const why = "browser tests: no chromium, chromium-browser or google-chrome on PATH (apt-get install chromium)"
	if os.Getenv(browserEnvRequire) == "1" {
		t.Fatal(why + ", and " + browserEnvRequire + "=1 requires them")
	}
	t.Skip(why)
	return ""
}

// chrome is one headless browser with one tab, walking one dashboard.
type chrome struct {
	t   *testing.T
	d   *dashboard
	ctx context.Context
	// shots is where this walk's screenshots go ("" for none).
	shots string

	mu sync.Mutex
	// problems are the console errors, uncaught exceptions and browser log errors not yet
	// reported by a step.
	problems []string
	// documents are the URLs of the pages the tab loaded, redirects included, in order.
	documents []string
	// expected are the parts of the problems the current step causes on purpose (a page
	// answered with an error status).
	expected []string
	// failed is set once a step failed: the steps after it depend on it and are skipped.
	failed bool
}

// startChrome starts a browser of its own (its own profile, so its own cookies) for
// dashboard d. It trusts any certificate, which only the test servers' need. shots says
// whether this walk saves screenshots (-browser.shots).
func startChrome(t *testing.T, d *dashboard, shots bool) *chrome {
	t.Helper()
	path := browserPath(t)
	c := &chrome{t: t, d: d}
	if shots && *shotsDir != "" {
		c.shots = shotsPath(t, *shotsDir)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("ignore-certificate-errors", true),
		chromedp.Flag("no-proxy-server", true),
		chromedp.WindowSize(viewWidth, viewHeight),
		// Root in a container has no user namespaces for the sandbox; the pages are the
		// test's own.
		chromedp.NoSandbox,
	)
	ctx, cancel := context.WithTimeout(t.Context(), walkTimeout)
	t.Cleanup(cancel)
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	tab, cancelTab := chromedp.NewContext(alloc, chromedp.WithListener(c.listen))
	t.Cleanup(cancelTab)
	c.ctx = tab
	if err := chromedp.Do(tab, chromedp.EmulateViewport(viewWidth, viewHeight)); err != nil {
		t.Fatalf("browser tests: couldn't start %s: %v", path, err)
	}
	return c
}

// shotsPath returns dir (a relative one is taken from the repository's root), created.
func shotsPath(t *testing.T, dir string) string {
	t.Helper()
	if !filepath.IsAbs(dir) {
		// Tests run in the package's directory, one below the root.
		dir = filepath.Join("..", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// listen records what the tab reports: it runs in the tab's event loop, so it only notes.
func (c *chrome) listen(ev any) {
	var problem, document string
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			problem = "console." + string(ev.Type) + ": " + argsText(ev.Args)
		}
	case *runtime.EventExceptionThrown:
		problem = "uncaught exception: " + exceptionText(ev.ExceptionDetails)
	case *log.EventEntryAdded:
		if e := ev.Entry; e != nil && e.Level == log.EntryLevelError {
			problem = fmt.Sprintf("browser log (%s): %s %s", e.Source, e.Text, e.URL)
		}
	case *network.EventRequestWillBeSent:
		if ev.Type == network.ResourceTypeDocument && ev.Request != nil {
			document = ev.Request.URL
		}
	}
	if problem == "" && document == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if problem != "" {
		c.problems = append(c.problems, problem)
	}
	if document != "" {
		c.documents = append(c.documents, document)
	}
}

// argsText is a console call's arguments as DevTools shows them.
func argsText(args []*runtime.RemoteObject) string {
	var parts []string
	for _, a := range args {
		switch {
		case a == nil:
		case a.Description != "":
			parts = append(parts, a.Description)
		default:
			parts = append(parts, string(a.Value))
		}
	}
	return strings.Join(parts, " ")
}

// exceptionText is an uncaught exception's message and where it was thrown.
func exceptionText(d *runtime.ExceptionDetails) string {
	if d == nil {
		return "?"
	}
	text := d.Text
	if d.Exception != nil && d.Exception.Description != "" {
		text += " " + d.Exception.Description
	}
	return fmt.Sprintf("%s (%s:%d)", text, d.URL, d.LineNumber+1)
}

// step runs one step of a walk as a subtest, then fails it on anything the browser
// reported meanwhile. Once a step failed, the steps after it (which start where it should
// have ended) are skipped.
func (c *chrome) step(name string, f func(t *testing.T)) {
	c.t.Helper()
	c.t.Run(name, func(t *testing.T) {
		if c.failed {
			t.Skip("a step before this one failed")
		}
		defer c.reportProblems(t)
		c.expected = nil
		f(t)
	})
	if c.t.Failed() {
		c.failed = true
	}
}

// reportProblems fails t with the console errors, exceptions and log errors seen since
// the last report.
func (c *chrome) reportProblems(t *testing.T) {
	t.Helper()
	c.mu.Lock()
	problems := c.problems
	c.problems = nil
	c.mu.Unlock()
	for _, p := range problems {
		if slices.ContainsFunc(c.expected, func(e string) bool { return strings.Contains(p, e) }) {
			continue
		}
		t.Errorf("the browser reported an error: %s", p)
	}
}

// expectError lets the current step's page report a problem containing part: the browser
// logs an error for a page that answers an error status, which a step may mean to reach.
func (c *chrome) expectError(part string) { c.expected = append(c.expected, part) }

// takeDocuments returns the URLs of the pages loaded since the last call.
func (c *chrome) takeDocuments() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	docs := c.documents
	c.documents = nil
	return docs
}

// must fails t with what the browser was doing when err happened.
func (c *chrome) must(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("%w (the walk's %s ran out)", err, walkTimeout)
	}
	where, _ := chromedp.Run(c.ctx, chromedp.Location())
	t.Fatalf("%s: %v (the tab is at %s)\nthe dashboard's log:\n%s", what, err, where, c.d.log)
}

// open loads path of the dashboard (or an absolute URL) and waits for it, redirects and all.
func (c *chrome) open(t *testing.T, path string) {
	t.Helper()
	target := path
	if strings.HasPrefix(path, "/") {
		target = c.d.srv.URL + path
	}
	c.must(t, "open "+path, chromedp.Do(c.ctx, chromedp.Navigate(target)))
}

// click clicks the element sel finds and waits for the page it leads to: a link followed,
// a form submitted, redirects and all.
func (c *chrome) click(t *testing.T, sel string) {
	t.Helper()
	_, err := chromedp.Run(c.ctx, chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.Click(chromedp.CSS(sel))))
	c.must(t, "click "+sel, err)
}

// tick clicks the checkbox (or any element that leads nowhere) sel finds, without waiting
// for a page.
func (c *chrome) tick(t *testing.T, sel string) {
	t.Helper()
	c.must(t, "tick "+sel, chromedp.Do(c.ctx, chromedp.Click(chromedp.CSS(sel))))
}

// choose selects the option of value in the select sel finds.
func (c *chrome) choose(t *testing.T, sel, value string) {
	t.Helper()
	c.must(t, "choose "+value+" in "+sel, chromedp.Do(c.ctx, chromedp.SetValue(chromedp.CSS(sel), value)))
}

// peek opens path in a second tab of the same browser (so with the same cookies), returns
// the visible text of sel there and closes the tab: what another window of the member
// shows now, while this tab keeps its page and its forms. The second tab's console errors
// count as this step's.
func (c *chrome) peek(t *testing.T, path, sel string) string {
	t.Helper()
	tab, cancel := chromedp.NewContext(c.ctx, chromedp.WithListener(c.listen))
	defer cancel()
	c.must(t, "peek at "+path, chromedp.Do(tab, chromedp.Navigate(c.d.srv.URL+path)))
	s, err := chromedp.Run(tab, chromedp.Text(chromedp.CSS(sel)))
	c.must(t, "read the text of "+sel+" at "+path, err)
	return strings.TrimSpace(s)
}

// fill types value into the (empty) field sel finds.
func (c *chrome) fill(t *testing.T, sel, value string) {
	t.Helper()
	c.must(t, "fill "+sel, chromedp.Do(c.ctx, chromedp.SendKeys(chromedp.CSS(sel), value)))
}

// replace empties the field sel finds and types value into it, as a member rewriting it would.
func (c *chrome) replace(t *testing.T, sel, value string) {
	t.Helper()
	c.must(t, "clear "+sel, chromedp.Do(c.ctx, chromedp.Clear(chromedp.CSS(sel))))
	c.fill(t, sel, value)
}

// text returns the visible text of the first element sel finds.
func (c *chrome) text(t *testing.T, sel string) string {
	t.Helper()
	s, err := chromedp.Run(c.ctx, chromedp.Text(chromedp.CSS(sel)))
	c.must(t, "read the text of "+sel, err)
	return strings.TrimSpace(s)
}

// count returns how many elements sel finds now, without waiting for one.
func (c *chrome) count(t *testing.T, sel string) int {
	t.Helper()
	quoted, _ := json.Marshal(sel)
	n, err := chromedp.Run(c.ctx, chromedp.Evaluate[int]("document.querySelectorAll("+string(quoted)+").length"))
	c.must(t, "count "+sel, err)
	return n
}

// attr returns attribute name of the first element sel finds ("" when it has none).
func (c *chrome) attr(t *testing.T, sel, name string) string {
	t.Helper()
	res, err := chromedp.Run(c.ctx, chromedp.AttributeValue(chromedp.CSS(sel), name))
	c.must(t, "read "+name+" of "+sel, err)
	return res.Value
}

// location returns the URL the tab shows.
func (c *chrome) location(t *testing.T) *url.URL {
	t.Helper()
	loc, err := chromedp.Run(c.ctx, chromedp.Location())
	c.must(t, "read the location", err)
	u, err := url.Parse(loc)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// script evaluates expr in the page (through DevTools, so the page's CSP does not apply)
// and returns its string value.
func (c *chrome) script(t *testing.T, expr string) string {
	t.Helper()
	s, err := chromedp.Run(c.ctx, chromedp.Evaluate[string](expr))
	c.must(t, "evaluate "+expr, err)
	return s
}

// cookies returns the browser's cookies for the dashboard, HttpOnly ones included.
func (c *chrome) cookies(t *testing.T) map[string]*network.Cookie {
	t.Helper()
	res, err := chromedp.Call(c.ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{c.d.srv.URL + "/"}})
	c.must(t, "read the cookies", err)
	out := map[string]*network.Cookie{}
	for _, ck := range res.Cookies {
		out[ck.Name] = ck
	}
	return out
}

// setCookie puts a cookie back into the browser as the dashboard had set it, as a thief
// who copied it would.
func (c *chrome) setCookie(t *testing.T, ck *network.Cookie) {
	t.Helper()
	yes := true
	_, err := chromedp.Call(c.ctx, network.SetCookie, network.SetCookieParams{Name: ck.Name, Value: ck.Value,
		URL: c.d.srv.URL + "/", Path: "/", Secure: &yes, HTTPOnly: &yes, SameSite: ck.SameSite})
	c.must(t, "set cookie "+ck.Name, err)
}

// shot saves a full-page screenshot of the tab as name.png, when screenshots were asked for.
func (c *chrome) shot(t *testing.T, name string) {
	t.Helper()
	if c.shots == "" {
		return
	}
	png, err := chromedp.Run(c.ctx, chromedp.FullScreenshot(100))
	c.must(t, "screenshot "+name, err)
	if err := os.WriteFile(filepath.Join(c.shots, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// download clicks the link sel finds, lets the browser save what it downloads, and
// returns the file's bytes.
func (c *chrome) download(t *testing.T, sel string) []byte {
	t.Helper()
	dir := t.TempDir()
	yes := true
	_, err := chromedp.CallBrowser(c.ctx, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
		Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: dir, EventsEnabled: &yes})
	c.must(t, "allow downloads", err)
	progress := chromedp.BrowserEvents(c.ctx, cdpbrowser.DownloadProgress)
	c.must(t, "click "+sel, chromedp.Do(c.ctx, chromedp.Click(chromedp.CSS(sel))))
	for ev, err := range progress {
		c.must(t, "download from "+sel, err)
		switch ev.State {
		case cdpbrowser.DownloadProgressStateCompleted:
			raw, err := os.ReadFile(filepath.Join(dir, ev.GUID))
			if err != nil {
				t.Fatalf("the browser saved no file for %s: %v", sel, err)
			}
			return raw
		case cdpbrowser.DownloadProgressStateCanceled:
			t.Fatalf("the browser cancelled the download of %s", sel)
		}
	}
	t.Fatalf("the download of %s never completed", sel)
	return nil
}
