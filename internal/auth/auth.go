// Package auth is console access: users with bcrypt-hashed passwords, one
// role each (pm, reviewer, admin) in one tenant; sessions stored in
// PostgreSQL through github.com/alexedwards/scs (its pgxstore); and
// per-tenant API tokens for programs, stored hashed. Accounts (accounts.go):
// tenants and users created, roles changed, users deactivated and reactivated,
// one-time password links, each audited; the password rules (password.go, with
// github.com/trustelem/zxcvbn). With internal/postgres it is the only package
// that imports db/ and pgx; it also imports internal/fault and internal/graph
// (for their error vocabulary) and internal/usertext.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/alexedwards/scs/pgxstore"
	"github.com/alexedwards/scs/v2"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"golang.org/x/crypto/bcrypt"

	"weft/db"
	"weft/internal/postgres"
	"weft/internal/usertext"
)

// Role is a user's role.
type Role string

// The roles.
const (
	PM       Role = "pm"
	Reviewer Role = "reviewer"
	Admin    Role = "admin"
)

// Valid reports whether r is a known role.
func (r Role) Valid() bool { return r == PM || r == Reviewer || r == Admin }

// User is a console user.
type User struct {
	ID       string
	TenantID string
	Email    string
	Name     string
	Role     Role
}

// ErrInvalidLogin is a wrong email or password (one error for both).
var ErrInvalidLogin = errors.New("the email or password is not right")

// ErrInvalidToken is an unknown or revoked API token.
var ErrInvalidToken = errors.New("the API token is not valid")

// ErrTokenNameTaken is a new API token named as a live one of the tenant.
var ErrTokenNameTaken = errors.New("token name taken")

// ErrUnknownTenant is a tenant id that names no tenant.
var ErrUnknownTenant = errors.New("no such tenant")

// Service is users, sessions and API tokens.
type Service struct {
	idle     time.Duration
	d        *postgres.DB
	linkTTL  time.Duration
	q        *db.Queries
	cost     int
	Sessions *scs.SessionManager
}

// Options configure the session cookie.
type Options struct {
	Secure   bool          // cookie only over HTTPS (true in production)
	Lifetime time.Duration // default 12h
	// IdleTimeout ends a session not used for this long (default 2h).
	IdleTimeout time.Duration
	// HashCost is the bcrypt cost of new passwords (default
	// bcrypt.DefaultCost; tests use bcrypt.MinCost).
	HashCost int
	// LinkTTL is how long a link to set or reset a password works (default 24h).
	LinkTTL time.Duration
}

// New returns the service on d.
func New(d *postgres.DB, o Options) *Service {
	sm := scs.New()
	sm.Store = pgxstore.NewWithCleanupInterval(d.Pool(), 10*time.Minute)
	sm.Lifetime = o.Lifetime
	if sm.Lifetime <= 0 {
		sm.Lifetime = 12 * time.Hour
	}
	// The idle timeout is enforced by Touch, not by scs: scs renews an idle
	// timeout by writing the session back on every request, a database write
	// per page view (and per htmx refresh); Touch writes at most once a
	// minute per session.
	sm.IdleTimeout = 0
	idle := o.IdleTimeout
	if idle <= 0 {
		idle = 2 * time.Hour
	}
	sm.Cookie.Name = "weft_session"
	sm.Cookie.HttpOnly = true
	sm.Cookie.SameSite = http.SameSiteLaxMode
	sm.Cookie.Secure = o.Secure
	cost := o.HashCost
	if cost == 0 {
		cost = bcrypt.DefaultCost
	}
	ttl := o.LinkTTL
	if ttl <= 0 {
		ttl = DefaultLinkTTL
	}
	return &Service{idle: idle, d: d, linkTTL: ttl, q: db.New(d.Pool()), cost: cost, Sessions: sm}
}

// HashPassword hashes a password with bcrypt at the given cost.
func HashPassword(pw string, cost int) (string, error) {
	b, err := bcrypt.GenerateFromPassword([]byte(pw), cost)
	if err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	return string(b), nil
}

// CreateUser adds a user unless the email exists.
func (s *Service) CreateUser(ctx context.Context, u User, password string) error {
	if !u.Role.Valid() {
		return fmt.Errorf("create user: unknown role %q", u.Role)
	}
	if err := usertext.Check("the name", u.Name); err != nil {
		return fmt.Errorf("create user: %w", err)
	}
	if err := usertext.Check("the email", u.Email); err != nil {
		return fmt.Errorf("create user: %w", err)
	}
	if len(password) < 8 {
		return fmt.Errorf("create user: the password needs at least 8 characters")
	}
	h, err := HashPassword(password, s.cost)
	if err != nil {
		return err
	}
	if err := s.q.UserInsert(ctx, db.UserInsertParams{ID: u.ID, TenantID: u.TenantID, Email: u.Email, Name: u.Name, Role: string(u.Role), PasswordHash: h}); err != nil {
		return fmt.Errorf("create user %s: %w", u.Email, err)
	}
	return nil
}

// Authenticate checks an email and password.
func (s *Service) Authenticate(ctx context.Context, email, password string) (User, error) {
	row, err := s.q.UserByEmail(ctx, email)
	if errors.Is(err, pgx.ErrNoRows) {
		// Spend the same time as a wrong password, so timing does not reveal emails.
		_ = bcrypt.CompareHashAndPassword([]byte("$2a$10$7EqJtq98hPqEX7fNZaFWoOhi5BWX4Z6Q8u1Q3mF5Qm1gN8Ww9xQ9e"), []byte(password))
		return User{}, ErrInvalidLogin
	}
	if err != nil {
		return User{}, fmt.Errorf("look up user: %w", err)
	}
	if bcrypt.CompareHashAndPassword([]byte(row.PasswordHash), []byte(password)) != nil {
		return User{}, ErrInvalidLogin
	}
	if row.DeactivatedAt != nil { // told only to who knows the password
		return User{}, ErrDeactivated
	}
	return userFrom(row), nil
}

// User loads a user by id.
func (s *Service) User(ctx context.Context, id string) (User, error) {
	row, err := s.q.UserGet(ctx, id)
	if err != nil {
		return User{}, fmt.Errorf("load user: %w", err)
	}
	return userFrom(row), nil
}

// UserNames maps the ids of a tenant's users to their names, for pages that show who did
// something (audit actors, reviewers) to people.
func (s *Service) UserNames(ctx context.Context, tenantID string) (map[string]string, error) {
	rows, err := s.q.UserListByTenant(ctx, tenantID)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	names := make(map[string]string, len(rows))
	for _, r := range rows {
		names[r.ID] = r.Name
	}
	return names, nil
}

// Actors are the audit actors of a tenant that who names, for the audit log's actor filter.
// who may be a user's id or email (any case), part of a user's name, id or email (any case), a token's
// name or token:<name>, or an actor exactly as recorded. A user matches with what they did
// through an API token (recorded "<user id> via token:<name>"), and a token with what it did
// in its own name and in any user's. Empty when nothing matches.
func (s *Service) Actors(ctx context.Context, tenantID, who string) ([]string, error) {
	users, err := s.q.UserListByTenant(ctx, tenantID)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	tokens, err := s.q.APITokenList(ctx, tenantID)
	if err != nil {
		return nil, fmt.Errorf("list API tokens: %w", err)
	}
	lower := strings.ToLower(who)
	var matchedUsers, matchedTokens []string
	// A user's whole id or email names that user alone ("ann@x.com", not "joann@x.com" too);
	// otherwise part of a name matches, and part of an id or email of three characters or
	// more ("system" and "cli", which name the system's actors, match no user's id or email).
	for _, r := range users {
		if r.ID == who || strings.EqualFold(r.Email, who) {
			matchedUsers = append(matchedUsers, r.ID)
		}
	}
	if len(matchedUsers) == 0 {
		partOf := func(s string) bool {
			return utf8.RuneCountInString(lower) >= 3 && lower != "system" && lower != "cli" && strings.Contains(strings.ToLower(s), lower)
		}
		for _, r := range users {
			if strings.Contains(strings.ToLower(r.Name), lower) || partOf(r.ID) || partOf(r.Email) {
				matchedUsers = append(matchedUsers, r.ID)
			}
		}
	}
	for _, t := range tokens {
		if strings.EqualFold(t.Name, who) || strings.EqualFold("token:"+t.Name, who) {
			matchedTokens = append(matchedTokens, "token:"+t.Name)
		}
	}
	out := []string{who}
	seen := map[string]bool{who: true}
	add := func(a string) {
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	for _, u := range matchedUsers {
		add(u)
		for _, t := range tokens {
			add(u + " via token:" + t.Name)
		}
	}
	for _, t := range matchedTokens {
		add(t)
		for _, u := range users {
			add(u.ID + " via " + t)
		}
	}
	return out, nil
}

// APIToken is an API token as listed (its secret is never kept).
type APIToken struct {
	Name, CreatedBy string
	Role            Role
	CreatedAt       time.Time
	LastUsedAt      *time.Time
	RevokedAt       *time.Time
}

// APITokens lists a tenant's API tokens, live ones first.
func (s *Service) APITokens(ctx context.Context, tenantID string) ([]APIToken, error) {
	rows, err := s.q.APITokenList(ctx, tenantID)
	if err != nil {
		return nil, fmt.Errorf("list API tokens: %w", err)
	}
	if len(rows) == 0 {
		if err := s.tenantExists(ctx, tenantID); err != nil {
			return nil, fmt.Errorf("list API tokens: %w", err)
		}
	}
	out := make([]APIToken, 0, len(rows))
	for _, r := range rows {
		out = append(out, APIToken{Name: r.Name, CreatedBy: r.CreatedBy, Role: Role(r.Role), CreatedAt: r.CreatedAt,
			LastUsedAt: r.LastUsedAt, RevokedAt: r.RevokedAt})
	}
	return out, nil
}

// ErrNoSuchToken is a revoke of a name no live token of the tenant has.
var ErrNoSuchToken = errors.New("no live API token of that name")

// RevokeAPIToken ends a tenant's live token by name, in any case: requests with it get 401
// from then on. It returns the token's name as stored.
func (s *Service) RevokeAPIToken(ctx context.Context, tenantID, name string) (string, error) {
	names, err := s.q.APITokenRevoke(ctx, db.APITokenRevokeParams{TenantID: tenantID, Name: name})
	if err != nil {
		return "", fmt.Errorf("revoke API token: %w", err)
	}
	if len(names) == 0 {
		if err := s.tenantExists(ctx, tenantID); err != nil {
			return "", fmt.Errorf("revoke API token: %w", err)
		}
		return "", fmt.Errorf("revoke API token %q of tenant %q: %w", name, tenantID, ErrNoSuchToken)
	}
	return names[0], nil
}

func userFrom(r db.User) User {
	return User{ID: r.ID, TenantID: r.TenantID, Email: r.Email, Name: r.Name, Role: Role(r.Role)}
}

// Session keys.
const (
	sessionUser = "user_id"
	sessionSeen = "seen" // unix seconds: when a request last renewed the session
	// sessionLogin is when the user signed in (unix microseconds): a session older than the
	// user's sessions_revoked_at (a deactivation, a new password) no longer counts.
	sessionLogin = "login"
)

// idleRenewEvery is how stale a session's seen time gets before a request
// renews it (a write); the idle timeout is exact to within it.
const idleRenewEvery = time.Minute

// Touch enforces the idle timeout on the request's session (loaded by
// Sessions.Load): a signed-in session unused for longer than the timeout is
// destroyed, and one last renewed more than idleRenewEvery ago is renewed
// (marked modified, so the caller commits it). Other requests change nothing.
func (s *Service) Touch(ctx context.Context) error {
	sm := s.Sessions
	if !sm.Exists(ctx, sessionUser) {
		return nil
	}
	now := time.Now()
	seen := sm.GetInt64(ctx, sessionSeen)
	switch idle := now.Sub(time.Unix(seen, 0)); {
	case seen != 0 && idle > s.idle:
		return sm.Destroy(ctx)
	case seen == 0 || idle >= idleRenewEvery:
		sm.Put(ctx, sessionSeen, now.Unix())
	}
	return nil
}

// Login starts a session for u (renewing the token against fixation).
func (s *Service) Login(ctx context.Context, u User) error {
	if err := s.Sessions.RenewToken(ctx); err != nil {
		return fmt.Errorf("renew session: %w", err)
	}
	s.Sessions.Put(ctx, sessionUser, u.ID)
	s.Sessions.Put(ctx, sessionSeen, time.Now().Unix())
	s.Sessions.Put(ctx, sessionLogin, time.Now().UnixMicro())
	return nil
}

// Logout ends the session.
func (s *Service) Logout(ctx context.Context) error {
	return s.Sessions.Destroy(ctx)
}

// SessionUser returns the logged-in user of the request's session.
func (s *Service) SessionUser(ctx context.Context) (User, bool) {
	id := s.Sessions.GetString(ctx, sessionUser)
	if id == "" {
		return User{}, false
	}
	row, err := s.q.UserGet(ctx, id)
	if err != nil || !sessionStands(row, s.Sessions.GetInt64(ctx, sessionLogin)) {
		return User{}, false
	}
	return userFrom(row), true
}

// IssueAPIToken creates a token for programs; the secret is returned once.
func (s *Service) IssueAPIToken(ctx context.Context, tenantID, name string, role Role, createdBy string) (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	secret := "wft_" + base64.RawURLEncoding.EncodeToString(b)
	if !role.Valid() {
		return "", fmt.Errorf("issue API token: the role %q is not pm, reviewer or admin", role)
	}
	if err := CheckTokenName(name); err != nil {
		return "", fmt.Errorf("issue API token: %w", err)
	}
	if err := s.tenantExists(ctx, tenantID); err != nil {
		return "", fmt.Errorf("issue API token: %w", err)
	}
	if err := s.q.APITokenInsert(ctx, db.APITokenInsertParams{Hash: hashSecret(secret), TenantID: tenantID, Name: name, Role: string(role), CreatedBy: createdBy}); err != nil {
		if pe := (*pgconn.PgError)(nil); errors.As(err, &pe) && pe.Code == "23505" && pe.ConstraintName == "api_tokens_live_name" {
			live := name // the live token's name as stored (CI is taken by ci)
			if n, err := s.q.APITokenLiveName(ctx, db.APITokenLiveNameParams{TenantID: tenantID, Name: name}); err == nil {
				live = n
			}
			return "", fmt.Errorf("issue API token: %w: tenant %q already has a live token named %q (names are unique in any case, as the audit log knows tokens by name); choose another name or revoke that one", ErrTokenNameTaken, tenantID, live)
		}
		return "", fmt.Errorf("issue API token: %w", err)
	}
	return secret, nil
}

// tenantExists is nil for a tenant that exists, else ErrUnknownTenant.
func (s *Service) tenantExists(ctx context.Context, tenantID string) error {
	if _, err := s.q.TenantGet(ctx, tenantID); errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%w: %q", ErrUnknownTenant, tenantID)
	} else if err != nil {
		return err
	}
	return nil
}

// maxTokenName bounds a token's name, in characters.
const maxTokenName = 64

// ErrBadTokenName is a token name that cannot be told apart or typed: empty, blank at
// either end, too long, or holding control characters (newlines, tabs).
var ErrBadTokenName = errors.New("bad API token name")

// CheckTokenName refuses a name the audit log (token:NAME) and the token list could not
// show or be searched by.
func CheckTokenName(name string) error {
	switch invisible := formatChar(name); {
	case name == "" || strings.TrimSpace(name) != name:
		return fmt.Errorf("%w %q: it must not be empty or start or end with a space", ErrBadTokenName, name)
	case utf8.RuneCountInString(name) > maxTokenName:
		return fmt.Errorf("%w: it is longer than %d characters", ErrBadTokenName, maxTokenName)
	case strings.ContainsAny(name, "\t\n\r"): // one line: the list and the audit log show it on one
		return fmt.Errorf("%w %q: it must be one line, without line breaks or tabs", ErrBadTokenName, name)
	case invisible >= 0:
		// Format characters print as nothing (a zero-width space, a direction override): two
		// names would read alike in lists and the audit log, or one other than it is.
		return fmt.Errorf("%w %q: it holds the invisible character U+%04X, which would make it read like another name",
			ErrBadTokenName, name, invisible)
	case strings.Contains(name, " via "):
		// The audit log records a decision sent with a token as "<reviewer> via token:<name>".
		return fmt.Errorf("%w %q: it must not contain \" via \", which the audit log uses to say who acted through which token", ErrBadTokenName, name)
	}
	if err := usertext.Check("the name", name); err != nil { // the rule for all text people send
		return fmt.Errorf("%w %q: %w", ErrBadTokenName, name, err)
	}
	return nil
}

// formatChar is the first format character (Unicode category Cf) in s, or -1.
func formatChar(s string) rune {
	for _, r := range s {
		if unicode.Is(unicode.Cf, r) {
			return r
		}
	}
	return -1
}

// APIUser resolves an API token to the identity it acts as.
func (s *Service) APIUser(ctx context.Context, secret string) (User, error) {
	row, err := s.q.APITokenUse(ctx, hashSecret(secret))
	if errors.Is(err, pgx.ErrNoRows) {
		return User{}, ErrInvalidToken
	}
	if err != nil {
		return User{}, fmt.Errorf("check API token: %w", err)
	}
	return User{ID: "token:" + row.Name, TenantID: row.TenantID, Name: row.Name + " (API token)", Role: Role(row.Role)}, nil
}

// APITokenLive reports whether an API token is still live (not revoked since a request began).
func (s *Service) APITokenLive(ctx context.Context, secret string) (bool, error) {
	live, err := s.q.APITokenLive(ctx, hashSecret(secret))
	if err != nil {
		return false, fmt.Errorf("check API token: %w", err)
	}
	return live, nil
}

// SessionLive reports whether the session of a request begun earlier (its token,
// Sessions.Token) still stands: not logged out, not past its lifetime, and not idle longer
// than the idle timeout (which Touch enforces at the next request; a stream is no request).
func (s *Service) SessionLive(ctx context.Context, token string) (bool, error) {
	if token == "" {
		return false, nil
	}
	var (
		b     []byte
		found bool
		err   error
	)
	if cs, ok := s.Sessions.Store.(scs.CtxStore); ok {
		b, found, err = cs.FindCtx(ctx, token)
	} else {
		b, found, err = s.Sessions.Store.Find(token)
	}
	if err != nil {
		return false, fmt.Errorf("check session: %w", err)
	}
	if !found {
		return false, nil
	}
	deadline, values, err := s.Sessions.Codec.Decode(b)
	if err != nil {
		return false, fmt.Errorf("check session: %w", err)
	}
	if !time.Now().Before(deadline) {
		return false, nil
	}
	if id, _ := values[sessionUser].(string); id != "" {
		login, _ := values[sessionLogin].(int64)
		if row, err := s.q.UserGet(ctx, id); err != nil || !sessionStands(row, login) {
			return false, nil // deactivated, given a new password (or gone) since the request began
		}
	}
	seen, _ := values[sessionSeen].(int64)
	return seen == 0 || time.Since(time.Unix(seen, 0)) <= s.idle, nil
}

// sessionStands reports whether a session of the user signed in at login (unix
// microseconds; 0 for a session from before this was kept) still counts: the user is active
// and no deactivation or new password came after the sign-in.
func sessionStands(u db.User, login int64) bool {
	if u.DeactivatedAt != nil {
		return false
	}
	return u.SessionsRevokedAt == nil || time.UnixMicro(login).After(*u.SessionsRevokedAt)
}

func hashSecret(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// DemoPassword is the demo users' password (README and `make run` print it).
const DemoPassword = "weft-demo-2026"

// DemoUsers are the demo logins: one per role in the demo tenant, and an
// admin of the second tenant.
func DemoUsers(tenant, other string) []User {
	return []User{
		{ID: "u_pm", TenantID: tenant, Email: "pm@demo.weft", Name: "Paula Meyer", Role: PM},
		{ID: "u_reviewer", TenantID: tenant, Email: "reviewer@demo.weft", Name: "Ravi Rao", Role: Reviewer},
		{ID: "u_admin", TenantID: tenant, Email: "admin@demo.weft", Name: "Ada Admin", Role: Admin},
		{ID: "u_acme_admin", TenantID: other, Email: "admin@acme.weft", Name: "Otto Other (Acme admin)", Role: Admin},
	}
}
