package server

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"golang.org/x/time/rate"

	"weft/internal/auth"
	"weft/internal/fault"
	"weft/internal/server/mount"
	"weft/web/page"
)

// csp allows only this origin's scripts and styles: htmx and its SSE
// extension are served from /static, no inline script or style is used
// (htmx's indicator styles are turned off in the page's htmx-config).
const csp = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"font-src 'self'; object-src 'none'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'"

// securityHeaders sets the headers every answer carries (with https, HSTS too).
func securityHeaders(https bool) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			h := c.Response().Header()
			h.Set("Content-Security-Policy", csp)
			h.Set("X-Content-Type-Options", "nosniff")
			h.Set("X-Frame-Options", "DENY")
			h.Set("Referrer-Policy", "same-origin")
			h.Set("Cross-Origin-Opener-Policy", "same-origin")
			if https { // served over HTTPS (Secure cookies): browsers keep to it for a year
				h.Set("Strict-Transport-Security", "max-age=31536000")
			}
			return next(c)
		}
	}
}

// isStream matches the SSE routes, which timeout and compression must skip.
func isStream(c echo.Context) bool { return streamPath(c.Request().URL.Path) }

// streamPath reports whether p is an SSE stream's address.
func streamPath(p string) bool {
	return strings.HasSuffix(p, "/events") || strings.HasPrefix(p, "/events/")
}

func (s *Server) recoverPanics(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if v := recover(); v != nil {
				s.log.Error("handler panic", "panic", v, "path", c.Request().URL.Path, "stack", string(debug.Stack()))
				err = fmt.Errorf("panic: %v", v)
			}
		}()
		return next(c)
	}
}

func (s *Server) logRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		if isStream(c) {
			return nil
		}
		u, _ := c.Get(ctxUser).(auth.User)
		s.log.InfoContext(c.Request().Context(), "http", "method", c.Request().Method, "path", c.Request().URL.Path, "status", c.Response().Status,
			"ms", time.Since(start).Milliseconds(), "request_id", c.Response().Header().Get(echo.HeaderXRequestID), "user", u.ID)
		return nil
	}
}

// sessions loads the request's session (scs, stored in PostgreSQL), applies
// the idle timeout (auth.Service.Touch), and commits the session if it
// changed, writing the cookie, just before the response headers go out.
func (s *Server) sessions(next echo.HandlerFunc) echo.HandlerFunc {
	sm := s.auth.Sessions
	return func(c echo.Context) error {
		token := ""
		if ck, err := c.Cookie(sm.Cookie.Name); err == nil {
			token = ck.Value
		}
		ctx, err := sm.Load(c.Request().Context(), token)
		if err != nil {
			return fmt.Errorf("load session: %w", err)
		}
		if err := s.auth.Touch(ctx); err != nil {
			return fmt.Errorf("renew session: %w", err)
		}
		c.SetRequest(c.Request().WithContext(ctx))
		res := c.Response()
		res.Header().Add("Vary", "Cookie")
		res.Before(func() {
			switch sm.Status(ctx) {
			case scs.Modified:
				tok, exp, err := sm.Commit(ctx)
				if err != nil {
					s.log.Error("commit session", "err", err)
					return
				}
				sm.WriteSessionCookie(ctx, res.Writer, tok, exp)
			case scs.Destroyed:
				sm.WriteSessionCookie(ctx, res.Writer, "", time.Time{})
			}
		})
		return next(c)
	}
}

// Context keys.
const (
	ctxUser = mount.UserKey
	ctxCSRF = mount.CSRFKey
	// ctxFetchSite keeps the request's Sec-Fetch-Site while the token check runs without it.
	ctxFetchSite = "weft.sec_fetch_site"
)

// currentUser is the authenticated user (set by requireUser / requireToken).
func currentUser(c echo.Context) auth.User { return mount.User(c) }

func csrfToken(c echo.Context) string { return mount.CSRFToken(c) }

// csrf protects every form twice, and each check stands on its own:
//
//   - Its origin (net/http's CrossOriginProtection): a browser's post marked as coming from
//     another site, or from a sibling of this one (another subdomain or port: Sec-Fetch-Site
//     "same-site", which could have set the token's cookie), is refused; without
//     Sec-Fetch-Site (older browsers, proxies that drop it), an Origin other than this host
//     ("null" included) is refused, and without an Origin, a Referer from another host.
//   - A token in a cookie, echoed in a form field or (for htmx) a header, whatever the
//     request's headers claim: echo's CSRF middleware would take Sec-Fetch-Site
//     "same-origin" instead of the token, a header any program can send, so it never sees
//     that header (the origin check above has read it).
func (s *Server) csrf() echo.MiddlewareFunc {
	origin := http.NewCrossOriginProtection()
	token := middleware.CSRFWithConfig(middleware.CSRFConfig{
		TokenLookup:    "form:_csrf,header:X-CSRF-Token",
		CookieName:     "weft_csrf",
		CookiePath:     "/",
		CookieHTTPOnly: true,
		CookieSecure:   s.cfg.SecureCookies,
		CookieSameSite: http.SameSiteStrictMode,
		ContextKey:     ctxCSRF,
		ErrorHandler:   func(err error, c echo.Context) error { return csrfRefused },
	})
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		checked := token(func(c echo.Context) error {
			if site, ok := c.Get(ctxFetchSite).([]string); ok {
				c.Request().Header[echo.HeaderSecFetchSite] = site
			}
			return next(c)
		})
		return func(c echo.Context) error {
			r := c.Request()
			if !s.sameOrigin(origin, r) {
				return csrfRefused
			}
			if site, ok := r.Header[echo.HeaderSecFetchSite]; ok {
				c.Set(ctxFetchSite, site)
				r.Header.Del(echo.HeaderSecFetchSite)
			}
			return checked(c)
		}
	}
}

// sameOrigin reports whether r may change state as far as its origin says: a safe method,
// or a post CrossOriginProtection passes when compared with the host the browser asked for
// (r.Host, or behind a trusted proxy its X-Forwarded-Host), whose Referer, when that is all
// it says of where it comes from, names that host too.
func (s *Server) sameOrigin(origin *http.CrossOriginProtection, r *http.Request) bool {
	hosts := []string{r.Host}
	if fwd := strings.TrimSpace(strings.Split(r.Header.Get("X-Forwarded-Host"), ",")[0]); s.cfg.TrustProxy && fwd != "" {
		hosts = append(hosts, fwd)
	}
	for _, host := range hosts {
		as := r
		if host != r.Host {
			as = r.Clone(r.Context())
			as.Host = host
		}
		if origin.Check(as) == nil && refererFrom(r, host) {
			return true
		}
	}
	return false
}

// refererFrom: a post that says where it comes from by its Referer alone (no Sec-Fetch-Site,
// no Origin: CrossOriginProtection lets it pass) names host there. This site's pages send
// their address as the Referer to this site only (Referrer-Policy: same-origin).
func refererFrom(r *http.Request, host string) bool {
	ref := r.Header.Get("Referer")
	switch {
	case r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodOptions,
		r.Header.Get(echo.HeaderSecFetchSite) != "", r.Header.Get(echo.HeaderOrigin) != "", ref == "":
		return true
	}
	u, err := url.Parse(ref)
	return err == nil && u.Host == host
}

var csrfRefused = &httpError{status: http.StatusForbidden, code: fault.CodeCSRF,
	msg: "The form expired or did not come from this site. Reload the page and try again."}

// requireUser lets logged-in users through; others go to the login page
// (or get a 401 for htmx and programs).
func (s *Server) requireUser(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		u, ok := s.auth.SessionUser(c.Request().Context())
		if !ok {
			if c.Request().Header.Get("HX-Request") == "true" {
				// Back to the page the request came from once signed in (a form on it keeps
				// its draft in the browser).
				c.Response().Header().Set("HX-Redirect", loginFrom(c.Request().Header.Get("HX-Current-URL")))
				return &httpError{status: http.StatusUnauthorized, code: fault.CodeUnauthenticated, msg: "Your session ended. Log in again."}
			}
			next := c.Request().URL.RequestURI()
			return c.Redirect(http.StatusSeeOther, "/login?next="+urlQueryEscape(next))
		}
		c.Set(ctxUser, u)
		// A signed-in page is for its user only: neither the browser's cache nor one between
		// keeps it (a review form holds a resume token, the audit log what people did).
		c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
		return next(c)
	}
}

// requireRole admits only the given roles.
func requireRole(roles ...auth.Role) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			u := currentUser(c)
			for _, r := range roles {
				if u.Role == r {
					return next(c)
				}
			}
			if strings.HasPrefix(c.Path(), "/api/") {
				return &httpError{status: http.StatusForbidden, code: fault.CodeForbidden,
					msg: fmt.Sprintf("This endpoint needs the %s role; the API token has the %s role.", joinRoles(roles), u.Role)}
			}
			return &httpError{status: http.StatusForbidden, code: fault.CodeForbidden,
				msg: fmt.Sprintf("This page is for the %s role; you are signed in as %s.", joinRoles(roles), u.Role)}
		}
	}
}

func joinRoles(rs []auth.Role) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = string(r)
	}
	return strings.Join(s, " or ")
}

// bearer is the credential of an "Authorization: Bearer <token>" header; the scheme's name
// is read in any case (RFC 9110), and false means the header names no token.
func bearer(r *http.Request) (string, bool) {
	scheme, secret, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	secret = strings.TrimSpace(secret)
	return secret, strings.EqualFold(scheme, "Bearer") && secret != ""
}

// requireToken authenticates programs by "Authorization: Bearer <token>".
func (s *Server) requireToken(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		secret, ok := bearer(c.Request())
		if !ok {
			return &httpError{status: http.StatusUnauthorized, code: fault.CodeUnauthenticated, msg: "send an API token as Authorization: Bearer <token>"}
		}
		u, err := s.auth.APIUser(c.Request().Context(), secret)
		if err != nil {
			return &httpError{status: http.StatusUnauthorized, code: fault.CodeUnauthenticated, msg: "the API token is not valid"}
		}
		c.Set(ctxUser, u)
		return next(c)
	}
}

// loginLimiter limits failed sign-ins per client IP (a burst of LoginRate, refilled at
// LoginRate a minute) and per account from addresses it never signed in from (the email
// typed: a burst of twice that, refilled alike). Each attempt takes one from its address's bucket before the password
// is checked (so attempts sent at once cannot all pass on one remaining token), and a
// successful one gives it back: an office behind one address signing in at nine is not
// locked out by its own correct sign-ins. While an address has none left, every attempt gets
// the form with a message.
func (s *Server) loginLimiter() echo.MiddlewareFunc {
	l := &failureLimiter{rate: rate.Limit(s.cfg.LoginRate / 60), burst: int(s.cfg.LoginRate), idle: 10 * time.Minute,
		byKey: map[string]*failures{}}
	account := &failureLimiter{rate: rate.Limit(s.cfg.LoginRate / 60), burst: 2 * int(s.cfg.LoginRate), idle: 10 * time.Minute,
		byKey: map[string]*failures{}}
	known := &knownAddresses{at: map[string]map[string]time.Time{}}
	var proxyWarning sync.Once
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if c.Request().Method != http.MethodPost {
				return next(c)
			}
			if !s.cfg.TrustProxy && c.Request().Header.Get(echo.HeaderXForwardedFor) != "" {
				// Behind a reverse proxy every client has the proxy's address: one client's
				// wrong passwords then hold everyone's sign-ins back.
				if ip := net.ParseIP(c.RealIP()); ip != nil && (ip.IsLoopback() || ip.IsPrivate()) {
					proxyWarning.Do(func() {
						s.log.Warn("sign-ins arrive through a proxy (X-Forwarded-For from a private address) but weft serve was started without --trust-proxy: every client shares the proxy's sign-in limit",
							"proxy", c.RealIP())
					})
				}
			}
			email := strings.TrimSpace(c.FormValue("email"))
			refuse := func(wait time.Duration, why string) error {
				// The sign-in form again, with the message where a wrong password's goes, and
				// when to try again (in words, and in Retry-After for programs).
				secs := int(math.Ceil(wait.Seconds()))
				c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
				return render(c, http.StatusTooManyRequests, page.Login(s.meta(c, "Sign in"), page.LoginVM{
					Email: email, Next: safeNext(c.FormValue("next")), Error: fmt.Sprintf(why, inSeconds(secs)), Demo: s.demoLogins(c)}))
			}
			done, wait, ok := l.start(c.RealIP())
			if !ok {
				return refuse(wait, "Too many failed sign-ins from your address. Try again in %s.")
			}
			// Each account has its own budget too, so guesses spread over many addresses do
			// not go on without end (any email counts, known or not: the answer tells nothing).
			// An address the account signed in from before is exempt: guesses from elsewhere
			// cannot lock its owner out.
			key := strings.ToLower(email)
			doneAccount := func(bool) {}
			if !known.has(key, c.RealIP()) {
				if doneAccount, wait, ok = account.start(key); !ok {
					done(false)
					return refuse(wait, "Too many failed sign-ins for this account from new addresses. Try again in %s, or sign in from an address you used before.")
				}
			}
			err := next(c)
			failed := err != nil || c.Response().Status >= 400
			done(failed)
			doneAccount(failed)
			if !failed {
				known.add(key, c.RealIP())
			}
			return err
		}
	}
}

// knownAddresses remembers the addresses each account signed in from: for 30 days, at most
// 32 per account (its oldest go first) and 50,000 accounts. One account signing in from many
// addresses only pushes out its own.
type knownAddresses struct {
	mu sync.Mutex
	at map[string]map[string]time.Time // account → address → last sign-in
}

const (
	knownAddressFor  = 30 * 24 * time.Hour
	knownPerAccount  = 32
	knownAccountsMax = 50_000
)

func (k *knownAddresses) has(account, ip string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	at, ok := k.at[account][ip]
	return ok && time.Since(at) < knownAddressFor
}

func (k *knownAddresses) add(account, ip string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	addrs := k.at[account]
	if addrs == nil {
		if len(k.at) >= knownAccountsMax {
			for a := range k.at { // one account goes, whichever (a full table is rare)
				delete(k.at, a)
				break
			}
		}
		addrs = map[string]time.Time{}
		k.at[account] = addrs
	}
	if _, ok := addrs[ip]; !ok && len(addrs) >= knownPerAccount {
		oldest := ""
		for a, at := range addrs {
			if oldest == "" || at.Before(addrs[oldest]) {
				oldest = a
			}
		}
		delete(addrs, oldest)
	}
	addrs[ip] = time.Now()
}

// failureLimiter is a token bucket (x/time/rate) per key; buckets unused for idle are
// forgotten.
type failureLimiter struct {
	rate  rate.Limit
	burst int
	idle  time.Duration

	mu    sync.Mutex
	byKey map[string]*failures
	swept time.Time
}

type failures struct {
	lim      *rate.Limiter
	inFlight int // attempts started and not yet done
	last     time.Time
}

// start begins an attempt of key unless key has no failure left to spend (counting the
// attempts in flight as failures to come); done ends it, spending one when it failed. A
// refused attempt learns how long until key has one again (if those in flight fail).
func (l *failureLimiter) start(key string) (done func(failed bool), wait time.Duration, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if now.Sub(l.swept) > l.idle {
		for k, f := range l.byKey {
			if now.Sub(f.last) > l.idle {
				delete(l.byKey, k)
			}
		}
		l.swept = now
	}
	f := l.byKey[key]
	if f == nil {
		f = &failures{lim: rate.NewLimiter(l.rate, l.burst)}
		l.byKey[key] = f
	}
	f.last = now
	if short := 1 + float64(f.inFlight) - f.lim.TokensAt(now); short > 0 {
		return nil, time.Duration(short / float64(l.rate) * float64(time.Second)), false
	}
	f.inFlight++
	return func(failed bool) {
		l.mu.Lock()
		defer l.mu.Unlock()
		f.inFlight--
		if failed {
			f.lim.AllowN(time.Now(), 1)
		}
	}, 0, true
}

// inSeconds says a wait of secs seconds in words: "1 second", "45 seconds", "2 minutes"
// (rounded up).
func inSeconds(secs int) string {
	switch {
	case secs <= 1:
		return "1 second"
	case secs < 60:
		return strconv.Itoa(secs) + " seconds"
	case secs == 60:
		return "1 minute"
	}
	return strconv.Itoa((secs+59)/60) + " minutes"
}

// loginFrom is the sign-in page, saying the session ended, that returns to the page at
// current (htmx's HX-Current-URL, an absolute URL): its path and query, if it is a page of
// this site's sort; plain /login?ended=1 otherwise.
func loginFrom(current string) string {
	u, err := url.Parse(current)
	if err != nil || u.Path == "" || u.Path == "/login" {
		return "/login?ended=1"
	}
	next := safeNext(u.RequestURI())
	if next == "" {
		return "/login?ended=1"
	}
	return "/login?ended=1&next=" + urlQueryEscape(next)
}
