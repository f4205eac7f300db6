package web

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"golang.org/x/text/language"

	"github.com/kioku-bot/kioku/i18n"
)

// The pages: html/template files embedded in the binary, each one defining "content" for
// the shared layout, and the stylesheet. Templates escape everything they are given, so a
// memory holding markup shows as text.

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static/style.css
var styleCSS []byte

// views render the pages: one parsed template set per page, each the layout with that
// page's content, and the answers every part of the dashboard shares (errors, 429).
type views struct {
	byName map[string]*template.Template
	log    *slog.Logger
}

// pageNames are the files of templates/ other than the layout.
var pageNames = []string{"me", "memory", "message", "edit", "history", "forgetme", "elsewhere", "review", "graph", "health",
	"servers", "server", "servermemory", "bulkpreview", "bulkresult"}

func parseViews(log *slog.Logger) (*views, error) {
	funcs := template.FuncMap{
		// t and n are filled per render with the visit's language (render).
		"t": func(string, ...any) string { return "" },
		"n": func(string, int, ...any) string { return "" },
	}
	vw := &views{byName: map[string]*template.Template{}, log: log}
	for _, name := range pageNames {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFiles, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("web: couldn't parse the %s page: %w", name, err)
		}
		vw.byName[name] = t
	}
	return vw, nil
}

// page is what the layout shows around a page's content.
type page struct {
	Lang i18n.Locale
	// Title is the page's heading (an i18n key's text).
	Title string
	// SignedIn is set on pages of a session, CSRF is its token for the sign-out form.
	SignedIn bool
	CSRF     string
	// Path is the page's path, for the language links.
	Path string
	// Body is the page's own data.
	Body any
}

// render writes page name with status, titled by the text of titleKey with titleArgs. The
// page is rendered into a buffer first, so a template error answers 500, not half a page.
func (vw *views) render(w http.ResponseWriter, r *http.Request, v *visit, status int, name, titleKey string, body any, titleArgs ...any) {
	vw.renderIn(w, r, v, vw.langOf(w, r, v), status, name, titleKey, body, titleArgs...)
}

// renderIn is render in lang.
func (vw *views) renderIn(w http.ResponseWriter, r *http.Request, v *visit, lang i18n.Locale, status int, name, titleKey string, body any, titleArgs ...any) {
	t, err := vw.byName[name].Clone()
	if err == nil {
		t = t.Funcs(template.FuncMap{
			"t": func(key string, args ...any) string { return i18n.T(lang, i18n.Key(key), args...) },
			"n": func(key string, n int, args ...any) string { return i18n.N(lang, i18n.Key(key), n, args...) },
		})
	}
	p := page{Lang: lang, Title: i18n.T(lang, i18n.Key(titleKey), titleArgs...), Path: r.URL.Path, Body: body}
	if v != nil {
		p.SignedIn, p.CSRF = true, v.sess.CSRF
	}
	if status == http.StatusNotFound {
		// Nothing of what was asked for: a missing page reads the same whatever its URL.
		p.Path = "/"
	}
	var buf bytes.Buffer
	if err == nil {
		err = t.Execute(&buf, p)
	}
	if err != nil {
		vw.log.ErrorContext(r.Context(), "couldn't render a web page", "page", name, "err", err)
		http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// messageBody is the message page's: one sentence and, maybe, a link onwards.
type messageBody struct {
	Text string
	// Link, when set, is where the page offers to go next (its label is LinkText).
	Link, LinkText string
}

// message answers status with a page saying the text of key.
func (vw *views) message(w http.ResponseWriter, r *http.Request, v *visit, status int, key, link string) {
	lang := vw.langOf(w, r, v)
	body := messageBody{Text: i18n.T(lang, i18n.Key(key)), Link: link}
	switch link {
	case "/login":
		body.LinkText = i18n.T(lang, "web.link.sign_in")
	case "/me":
		body.LinkText = i18n.T(lang, "web.link.my_memory")
	case "/me/forget-me":
		body.LinkText = i18n.T(lang, "web.link.forget_me_again")
	default:
		if strings.HasPrefix(link, "/me/memories/") {
			body.LinkText = i18n.T(lang, "web.link.memory")
		} else if link != "" {
			body.LinkText = i18n.T(lang, "web.link.back")
		}
	}
	vw.renderIn(w, r, v, lang, status, "message", key+".title", body)
}

// notFound is the one answer for a page or a memory that does not exist and for a memory
// the member may not see: nothing in it depends on which.
func (vw *views) notFound(w http.ResponseWriter, r *http.Request, v *visit) {
	link := "/login"
	if v != nil {
		link = "/me"
	}
	vw.message(w, r, v, http.StatusNotFound, "web.error.not_found", link)
}

// forbidden answers a change that did not come from the dashboard's own form.
func (vw *views) forbidden(w http.ResponseWriter, r *http.Request, v *visit) {
	vw.message(w, r, v, http.StatusForbidden, "web.error.forbidden", "")
}

// internal logs err and answers 500 without its details.
func (vw *views) internal(w http.ResponseWriter, r *http.Request, v *visit, what string, err error) {
	attrs := []any{"err", err}
	if v != nil {
		attrs = append(attrs, "user_id", v.sess.UserID)
	}
	vw.log.ErrorContext(r.Context(), what, attrs...)
	vw.message(w, r, v, http.StatusInternalServerError, "web.error.internal", "")
}

// matcher picks the catalogue's language for an Accept-Language header, English first.
var matcher = language.NewMatcher([]language.Tag{language.English, language.Japanese})

// locale is the language of a request: ?lang= (remembered in a cookie for the pages that
// follow), else the remembered choice, else the browser's Accept-Language.
func (vw *views) locale(w http.ResponseWriter, r *http.Request) i18n.Locale {
	switch q := r.URL.Query().Get("lang"); q {
	case string(i18n.English), string(i18n.Japanese):
		setCookie(w, langCookie, q, 365*24*time.Hour)
		return i18n.Locale(q)
	}
	if c, err := r.Cookie(langCookie); err == nil && (c.Value == string(i18n.English) || c.Value == string(i18n.Japanese)) {
		return i18n.Locale(c.Value)
	}
	tags, _, _ := language.ParseAcceptLanguage(r.Header.Get("Accept-Language"))
	tag, _, _ := matcher.Match(tags...)
	base, _ := tag.Base()
	return i18n.Parse(base.String())
}

// langOf is the visit's language, or the request's for a page without a session.
func (vw *views) langOf(w http.ResponseWriter, r *http.Request, v *visit) i18n.Locale {
	if v != nil {
		return v.lang
	}
	return vw.locale(w, r)
}

// serveStyle serves the stylesheet, which changes only with the binary.
func serveStyle(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=86400")
	_, _ = w.Write(styleCSS)
}

// noIcon answers the icon browsers ask every site for on their own. The dashboard has none;
// "no content" says so without the 404 that would show as an error in every page's console.
func noIcon(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Cache-Control", "public, max-age=86400")
	w.WriteHeader(http.StatusNoContent)
}
