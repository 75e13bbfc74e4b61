package auth

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/crypto/bcrypt"

	"weft/db"
	"weft/internal/fault"
	"weft/internal/graph"
	"weft/internal/postgres"
	"weft/internal/usertext"
)

// Account management: admins (in the console, or anyone with the database through `weft
// user`) create users, change roles, deactivate and reactivate them, and issue one-time links
// that set or reset a password; each user changes their own password. Every change and its
// audit row commit in one transaction. A tenant always keeps one active admin.

// DefaultLinkTTL is how long a password link works unless Options.LinkTTL says otherwise.
const DefaultLinkTTL = 24 * time.Hour

// Audit actions of accounts.
const (
	ActionTenantCreate   = "tenant.create"
	ActionUserCreate     = "user.create"
	ActionUserRole       = "user.role"
	ActionUserDeactivate = "user.deactivate"
	ActionUserReactivate = "user.reactivate"
	ActionPasswordLink   = "user.password_link"   // a link to set or reset a password was issued
	ActionPasswordSet    = "user.password_set"    // a link was used
	ActionPasswordChange = "user.password_change" // a user changed their own password
)

// AuditActions are the account actions, for the audit log's action filter.
var AuditActions = []string{ActionTenantCreate, ActionUserCreate, ActionUserRole, ActionUserDeactivate,
	ActionUserReactivate, ActionPasswordLink, ActionPasswordSet, ActionPasswordChange}

// Errors of account management: each is a *fault.Error (its class gives the HTTP status).
var (
	ErrLastAdmin = fault.New(fault.Business, fault.CodeLastAdmin,
		"this is the tenant's last active admin: make another user admin first, so that someone can still manage the tenant")
	ErrEmailTaken   = fault.New(fault.Business, fault.CodeEmailTaken, "a user with this email exists already")
	ErrTenantTaken  = fault.New(fault.Business, fault.CodeTenantTaken, "a tenant with this slug exists already")
	ErrLinkUsed     = fault.New(fault.Business, fault.CodeLinkInvalid, "this link was used already: ask your admin for a new one")
	ErrLinkExpired  = fault.New(fault.Business, fault.CodeLinkInvalid, "this link has expired: ask your admin for a new one")
	ErrLinkReplaced = fault.New(fault.Business, fault.CodeLinkInvalid, "a newer link replaced this one: use the newest link you were sent")
	ErrLinkUnknown  = fault.New(fault.Business, fault.CodeLinkInvalid, "this link is not valid: check that it was copied whole")
	// ErrDeactivated is a sign-in with the right password to a deactivated account.
	ErrDeactivated = fault.New(fault.Security, fault.CodeDeactivated, "this account is deactivated: ask your admin")
)

// Account is a user as the admin pages and `weft user list` show them.
type Account struct {
	User
	CreatedAt     time.Time
	DeactivatedAt *time.Time
	PasswordSet   bool // false until a set-password link is used
}

// Active reports whether the account may sign in.
func (a Account) Active() bool { return a.DeactivatedAt == nil }

func accountFrom(r db.User) Account {
	return Account{User: userFrom(r), CreatedAt: r.CreatedAt, DeactivatedAt: r.DeactivatedAt, PasswordSet: r.PasswordHash != ""}
}

// q is the queries on ctx's transaction of the service's database, or its pool.
func (s *Service) qx(ctx context.Context) *db.Queries { return db.New(s.d.Conn(ctx)) }

// audit appends an audit row in ctx's transaction.
func (s *Service) audit(ctx context.Context, tenantID, actor, action, subject string, payload map[string]string) error {
	raw, err := json.Marshal(payload)
	if err != nil {
		return err
	}
	_, err = postgres.NewAudit(s.d).Append(ctx, postgres.Entry{TenantID: tenantID, Actor: actor, Action: action, Subject: subject, Payload: raw})
	return err
}

var slugRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,38}[a-z0-9]$`)

// CheckSlug refuses a tenant slug other than 3..40 lower-case letters, digits and inner hyphens.
func CheckSlug(slug string) error {
	if !slugRE.MatchString(slug) {
		return fault.New(fault.Validation, fault.CodeValidation, fmt.Sprintf(
			"the slug %q must be 3 to 40 lower-case letters, digits or hyphens, starting and ending with a letter or digit", slug))
	}
	return nil
}

// Tenant is a tenant as listed.
type Tenant struct {
	ID, Name  string
	CreatedAt time.Time
}

// CreateTenant adds a tenant (its id is the slug), audited in it as actor.
func (s *Service) CreateTenant(ctx context.Context, actor, slug, name string) (Tenant, error) {
	if err := CheckSlug(slug); err != nil {
		return Tenant{}, err
	}
	name = strings.TrimSpace(name)
	if err := checkName("the name", name); err != nil {
		return Tenant{}, err
	}
	var t Tenant
	err := s.d.InTx(ctx, func(ctx context.Context) error {
		row, err := s.qx(ctx).TenantCreate(ctx, db.TenantCreateParams{ID: slug, Name: name})
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("create tenant %s: %w", slug, ErrTenantTaken)
		}
		if err != nil {
			return fmt.Errorf("create tenant: %w", err)
		}
		t = Tenant{ID: row.ID, Name: row.Name, CreatedAt: row.CreatedAt}
		return s.audit(ctx, slug, actor, ActionTenantCreate, "tenant:"+slug, map[string]string{"name": name})
	})
	return t, err
}

// Tenants lists every tenant.
func (s *Service) Tenants(ctx context.Context) ([]Tenant, error) {
	rows, err := s.q.TenantList(ctx)
	if err != nil {
		return nil, fmt.Errorf("list tenants: %w", err)
	}
	out := make([]Tenant, 0, len(rows))
	for _, r := range rows {
		out = append(out, Tenant{ID: r.ID, Name: r.Name, CreatedAt: r.CreatedAt})
	}
	return out, nil
}

func checkName(field, v string) error {
	if v == "" {
		return fault.New(fault.Validation, fault.CodeValidation, field+" is required")
	}
	if len([]rune(v)) > 200 {
		return fault.New(fault.Validation, fault.CodeValidation, field+" is longer than 200 characters")
	}
	if err := usertext.Check(field, v); err != nil {
		return fault.Wrap(fault.Validation, fault.CodeValidation, err)
	}
	return nil
}

// checkEmail accepts a bare address (ann@example.com), nothing around it.
func checkEmail(email string) error {
	a, err := mail.ParseAddress(email)
	if _, domain, _ := strings.Cut(email, "@"); err != nil || a.Address != email || !strings.Contains(domain, ".") {
		return fault.New(fault.Validation, fault.CodeValidation, fmt.Sprintf("%q is not an email address like ann@example.com", email))
	}
	return checkName("the email", email)
}

func weak(err error) error {
	return &fault.Error{Class: fault.Validation, Code: fault.CodeWeakPassword, Message: err.Error(), Err: err}
}

// NewAccount is what creating a user takes.
type NewAccount struct {
	TenantID, Email, Name string
	Role                  Role
	// Password, when set, is the user's password (checked by CheckPassword); when empty the
	// user gets a link to set one.
	Password string
}

// CreateAccount adds a user to a tenant, audited as actor. Without a password it returns
// the secret of a one-time link to set one (SetPasswordPath makes it an address).
func (s *Service) CreateAccount(ctx context.Context, actor string, n NewAccount) (Account, string, error) {
	n.Email = strings.ToLower(strings.TrimSpace(n.Email))
	n.Name = strings.TrimSpace(n.Name)
	if !n.Role.Valid() {
		return Account{}, "", fault.New(fault.Validation, fault.CodeValidation, fmt.Sprintf("the role %q is not pm, reviewer or admin", n.Role))
	}
	if err := checkName("the name", n.Name); err != nil {
		return Account{}, "", err
	}
	if err := checkEmail(n.Email); err != nil {
		return Account{}, "", err
	}
	hash := ""
	if n.Password != "" {
		if err := CheckPassword(n.Password, n.Name, n.Email); err != nil {
			return Account{}, "", weak(err)
		}
		h, err := HashPassword(n.Password, s.cost)
		if err != nil {
			return Account{}, "", err
		}
		hash = h
	}
	var (
		acc    Account
		secret string
	)
	err := s.d.InTx(ctx, func(ctx context.Context) error {
		if err := s.tenantExists(ctx, n.TenantID); err != nil {
			return fault.Wrap(fault.Validation, fault.CodeValidation, err)
		}
		row, err := s.qx(ctx).UserCreate(ctx, db.UserCreateParams{ID: newUserID(), TenantID: n.TenantID, Email: n.Email,
			Name: n.Name, Role: string(n.Role), PasswordHash: hash})
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("create user %s: %w", n.Email, ErrEmailTaken)
		}
		if err != nil {
			return fmt.Errorf("create user: %w", err)
		}
		acc = accountFrom(row)
		if err := s.audit(ctx, n.TenantID, actor, ActionUserCreate, "user:"+acc.ID,
			map[string]string{"email": acc.Email, "name": acc.Name, "role": string(acc.Role)}); err != nil {
			return err
		}
		if hash == "" {
			secret, err = s.issueLink(ctx, actor, acc.User, "set")
		}
		return err
	})
	return acc, secret, err
}

// newUserID is a new user's id: u_ and 16 random base32 characters.
func newUserID() string {
	b := make([]byte, 10)
	_, _ = rand.Read(b)
	return "u_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
}

// Accounts lists a tenant's users (admins, then PMs, then reviewers; by email).
func (s *Service) Accounts(ctx context.Context, tenantID string) ([]Account, error) {
	rows, err := s.q.UserListByTenant(ctx, tenantID)
	return accountsFrom(rows, err)
}

func accountsFrom(rows []db.User, err error) ([]Account, error) {
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	out := make([]Account, 0, len(rows))
	for _, r := range rows {
		out = append(out, accountFrom(r))
	}
	return out, nil
}

// AllAccounts lists every tenant's users (for `weft user list` without --tenant).
func (s *Service) AllAccounts(ctx context.Context) ([]Account, error) {
	rows, err := s.q.UserListAll(ctx)
	return accountsFrom(rows, err)
}

// Account is a tenant's user by id; graph.ErrNotFound for an id of another tenant or none.
func (s *Service) Account(ctx context.Context, tenantID, id string) (Account, error) {
	row, err := s.qx(ctx).UserInTenant(ctx, db.UserInTenantParams{TenantID: tenantID, ID: id})
	if errors.Is(err, pgx.ErrNoRows) {
		return Account{}, fmt.Errorf("user %s: %w", id, graph.ErrNotFound)
	}
	if err != nil {
		return Account{}, fmt.Errorf("load user: %w", err)
	}
	return accountFrom(row), nil
}

// AccountByEmail is a user by email, in any tenant (for `weft user`).
func (s *Service) AccountByEmail(ctx context.Context, email string) (Account, error) {
	row, err := s.q.UserByEmail(ctx, strings.TrimSpace(email))
	if errors.Is(err, pgx.ErrNoRows) {
		return Account{}, fmt.Errorf("no user has the email %q: %w", email, graph.ErrNotFound)
	}
	if err != nil {
		return Account{}, fmt.Errorf("load user: %w", err)
	}
	return accountFrom(row), nil
}

// lockAccount loads and locks a tenant's user in ctx's transaction.
func (s *Service) lockAccount(ctx context.Context, tenantID, id string) (Account, error) {
	row, err := s.qx(ctx).UserInTenantForUpdate(ctx, db.UserInTenantForUpdateParams{TenantID: tenantID, ID: id})
	if errors.Is(err, pgx.ErrNoRows) {
		return Account{}, fmt.Errorf("user %s: %w", id, graph.ErrNotFound)
	}
	if err != nil {
		return Account{}, fmt.Errorf("load user: %w", err)
	}
	return accountFrom(row), nil
}

// lockAdmins locks the tenant's active admins (in id order) and returns their ids. A change
// that may take an admin away locks them before the user it changes: two such changes at
// once wait for each other in one order, never in a cycle.
func (s *Service) lockAdmins(ctx context.Context, tenantID string) ([]string, error) {
	admins, err := s.qx(ctx).UserActiveAdminsLock(ctx, tenantID)
	if err != nil {
		return nil, fmt.Errorf("count admins: %w", err)
	}
	return admins, nil
}

// keepsAnAdmin refuses a change that takes acc out of the tenant's active admins (locked by
// lockAdmins) when it is the last one.
func keepsAnAdmin(admins []string, acc Account) error {
	if acc.Role == Admin && acc.Active() && len(admins) <= 1 {
		return ErrLastAdmin
	}
	return nil
}

// SetRole changes a tenant's user's role, audited as actor. It refuses to demote the last
// active admin.
func (s *Service) SetRole(ctx context.Context, actor, tenantID, id string, role Role) (Account, error) {
	var acc Account
	err := s.d.InTx(ctx, func(ctx context.Context) error {
		admins, err := s.lockAdmins(ctx, tenantID)
		if err != nil {
			return err
		}
		a, err := s.lockAccount(ctx, tenantID, id) // another tenant's user is not found before anything else
		if err != nil {
			return err
		}
		if !role.Valid() {
			return fault.New(fault.Validation, fault.CodeValidation, fmt.Sprintf("the role %q is not pm, reviewer or admin", role))
		}
		if a.Role == role {
			acc = a
			return nil
		}
		if role != Admin {
			if err := keepsAnAdmin(admins, a); err != nil {
				return err
			}
		}
		if err := s.qx(ctx).UserSetRole(ctx, db.UserSetRoleParams{TenantID: tenantID, ID: id, Role: string(role)}); err != nil {
			return fmt.Errorf("set role: %w", err)
		}
		if err := s.audit(ctx, tenantID, actor, ActionUserRole, "user:"+id, map[string]string{"from": string(a.Role), "to": string(role)}); err != nil {
			return err
		}
		a.Role = role
		acc = a
		return nil
	})
	return acc, err
}

// SetActive deactivates (active false) or reactivates a tenant's user, audited as actor. A
// deactivated user's sessions and the API tokens they issued stop working at their next
// request; the last active admin cannot be deactivated.
func (s *Service) SetActive(ctx context.Context, actor, tenantID, id string, active bool) (Account, error) {
	var acc Account
	err := s.d.InTx(ctx, func(ctx context.Context) error {
		admins, err := s.lockAdmins(ctx, tenantID)
		if err != nil {
			return err
		}
		a, err := s.lockAccount(ctx, tenantID, id)
		if err != nil {
			return err
		}
		if a.Active() == active {
			acc = a
			return nil
		}
		action := ActionUserReactivate
		if !active {
			action = ActionUserDeactivate
			if err := keepsAnAdmin(admins, a); err != nil {
				return err
			}
		}
		if err := s.qx(ctx).UserSetDeactivated(ctx, db.UserSetDeactivatedParams{TenantID: tenantID, ID: id, Deactivate: !active}); err != nil {
			return fmt.Errorf("set active: %w", err)
		}
		if err := s.audit(ctx, tenantID, actor, action, "user:"+id, map[string]string{"email": a.Email}); err != nil {
			return err
		}
		acc, err = s.lockAccount(ctx, tenantID, id)
		return err
	})
	return acc, err
}

// IssueResetLink issues a one-time link to reset a tenant's user's password (replacing any
// unused one), audited as actor; it returns the link's secret.
func (s *Service) IssueResetLink(ctx context.Context, actor, tenantID, id string) (string, error) {
	var secret string
	err := s.d.InTx(ctx, func(ctx context.Context) error {
		a, err := s.lockAccount(ctx, tenantID, id)
		if err != nil {
			return err
		}
		if !a.Active() {
			return fault.New(fault.Business, fault.CodeDeactivated, "this account is deactivated: reactivate it before resetting its password")
		}
		purpose := "reset"
		if !a.PasswordSet {
			purpose = "set"
		}
		secret, err = s.issueLink(ctx, actor, a.User, purpose)
		return err
	})
	return secret, err
}

// issueLink stores a new link for u (ending its unused ones) in ctx's transaction, audited.
func (s *Service) issueLink(ctx context.Context, actor string, u User, purpose string) (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	secret := "wpl_" + base64.RawURLEncoding.EncodeToString(b)
	q := s.qx(ctx)
	if err := q.PasswordLinkRevokeOpen(ctx, u.ID); err != nil {
		return "", fmt.Errorf("replace password links: %w", err)
	}
	expires := time.Now().Add(s.linkTTL)
	if err := q.PasswordLinkInsert(ctx, db.PasswordLinkInsertParams{Hash: hashSecret(secret), TenantID: u.TenantID, UserID: u.ID,
		Purpose: purpose, CreatedBy: actor, ExpiresAt: expires}); err != nil {
		return "", fmt.Errorf("store password link: %w", err)
	}
	if err := s.audit(ctx, u.TenantID, actor, ActionPasswordLink, "user:"+u.ID,
		map[string]string{"purpose": purpose, "expires_at": expires.UTC().Format(time.RFC3339)}); err != nil {
		return "", err
	}
	return secret, nil
}

// LinkTTL is how long a password link this service issues works.
func (s *Service) LinkTTL() time.Duration { return s.linkTTL }

// SetPasswordPath is the console's address of a password link.
func SetPasswordPath(secret string) string { return "/password?token=" + secret }

// checkLink says why a link row cannot be used, or nil.
func checkLink(l db.PasswordLink) error {
	switch {
	case l.UsedAt != nil:
		return ErrLinkUsed
	case l.RevokedAt != nil:
		return ErrLinkReplaced
	case !time.Now().Before(l.ExpiresAt):
		return ErrLinkExpired
	}
	return nil
}

// PasswordLink is the account a usable link sets the password of (for its form).
func (s *Service) PasswordLink(ctx context.Context, secret string) (Account, error) {
	l, err := s.q.PasswordLinkGet(ctx, hashSecret(secret))
	if errors.Is(err, pgx.ErrNoRows) {
		return Account{}, ErrLinkUnknown
	}
	if err != nil {
		return Account{}, fmt.Errorf("check password link: %w", err)
	}
	if err := checkLink(l); err != nil {
		return Account{}, err
	}
	a, err := s.Account(ctx, l.TenantID, l.UserID)
	if err == nil && !a.Active() {
		return Account{}, ErrDeactivated
	}
	return a, err
}

// UsePasswordLink sets the password of a link's user and uses the link up, in one
// transaction with its audit row: a second use, an expired or replaced link, or a
// deactivated account is refused and changes nothing.
func (s *Service) UsePasswordLink(ctx context.Context, secret, password string) (Account, error) {
	var acc Account
	err := s.d.InTx(ctx, func(ctx context.Context) error {
		q := s.qx(ctx)
		l, err := q.PasswordLinkLock(ctx, hashSecret(secret))
		if errors.Is(err, pgx.ErrNoRows) {
			return ErrLinkUnknown
		}
		if err != nil {
			return fmt.Errorf("check password link: %w", err)
		}
		if err := checkLink(l); err != nil {
			return err
		}
		a, err := s.lockAccount(ctx, l.TenantID, l.UserID)
		if err != nil {
			return err
		}
		if !a.Active() {
			return ErrDeactivated
		}
		if err := CheckPassword(password, a.Name, a.Email); err != nil {
			return weak(err)
		}
		h, err := HashPassword(password, s.cost)
		if err != nil {
			return err
		}
		if err := q.UserSetPassword(ctx, db.UserSetPasswordParams{ID: a.ID, PasswordHash: h}); err != nil {
			return fmt.Errorf("set password: %w", err)
		}
		if err := q.PasswordLinkUse(ctx, l.Hash); err != nil {
			return fmt.Errorf("use password link: %w", err)
		}
		acc = a
		acc.PasswordSet = true
		return s.audit(ctx, a.TenantID, a.ID, ActionPasswordSet, "user:"+a.ID, map[string]string{"purpose": l.Purpose})
	})
	return acc, err
}

func bcryptMismatch(hash, pw string) bool {
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(pw)) != nil
}

// ErrWrongPassword is a password change whose current password is not right.
var ErrWrongPassword = fault.New(fault.Validation, fault.CodeValidation, "the current password is not right")

// ChangePassword sets a signed-in user's own password, given their current one.
func (s *Service) ChangePassword(ctx context.Context, userID, current, password string) error {
	return s.d.InTx(ctx, func(ctx context.Context) error {
		q := s.qx(ctx)
		row, err := q.UserGet(ctx, userID)
		if err != nil {
			return fmt.Errorf("load user: %w", err)
		}
		if row.PasswordHash == "" || bcryptMismatch(row.PasswordHash, current) {
			return ErrWrongPassword
		}
		if current == password {
			return weak(&PasswordError{"The new password is the one you have now: choose another."})
		}
		if err := CheckPassword(password, row.Name, row.Email); err != nil {
			return weak(err)
		}
		h, err := HashPassword(password, s.cost)
		if err != nil {
			return err
		}
		if err := q.UserSetPassword(ctx, db.UserSetPasswordParams{ID: row.ID, PasswordHash: h}); err != nil {
			return fmt.Errorf("set password: %w", err)
		}
		return s.audit(ctx, row.TenantID, row.ID, ActionPasswordChange, "user:"+row.ID, nil)
	})
}
