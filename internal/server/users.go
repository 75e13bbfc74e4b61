package server

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"weft/internal/auth"
	"weft/internal/fault"
	"weft/internal/graph"
	"weft/web/layout"
	"weft/web/page"
)

// The account pages and API: an admin manages the users of their own tenant (/admin/users,
// /api/v1/users with an admin token); each user changes their own password (/account); a
// one-time link sets or resets one (/password?token=…, open to anyone holding the link: the
// token is in the query, so request logs, which record the path, never hold it).
func (s *Server) routesUsers(signedIn *echo.Group) {
	admin := requireRole(auth.Admin)
	signedIn.GET("/admin/users", s.usersPage, admin)
	signedIn.POST("/admin/users", s.userCreate, admin)
	signedIn.POST("/admin/users/:id/role", s.userRole, admin)
	signedIn.POST("/admin/users/:id/deactivate", s.userActive(false), admin)
	signedIn.POST("/admin/users/:id/reactivate", s.userActive(true), admin)
	signedIn.POST("/admin/users/:id/reset-link", s.userResetLink, admin)
	// The actions' addresses opened lead back to the list, for a user of the tenant.
	toUsers := func(c echo.Context) error {
		if _, err := s.auth.Account(c.Request().Context(), currentUser(c).TenantID, c.Param("id")); err != nil {
			return err
		}
		return c.Redirect(http.StatusSeeOther, "/admin/users")
	}
	for _, a := range []string{"role", "deactivate", "reactivate", "reset-link"} {
		signedIn.GET("/admin/users/:id/"+a, toUsers, admin)
	}
	signedIn.GET("/admin", func(c echo.Context) error { return c.Redirect(http.StatusSeeOther, "/admin/users") }, admin)
	signedIn.GET("/account", s.accountPage)
	signedIn.POST("/account/password", s.accountPassword)
	signedIn.GET("/account/password", func(c echo.Context) error { return c.Redirect(http.StatusSeeOther, "/account") })
}

// routesPasswordLinks are the pages of one-time password links (no sign-in).
func (s *Server) routesPasswordLinks(web *echo.Group) {
	web.GET("/password", s.passwordLinkPage)
	web.POST("/password", s.passwordLinkSet)
}

// usersVM is the users page of the signed-in admin's tenant.
func (s *Server) usersVM(c echo.Context) (page.UsersVM, error) {
	u := currentUser(c)
	accs, err := s.auth.Accounts(c.Request().Context(), u.TenantID)
	if err != nil {
		return page.UsersVM{}, err
	}
	vm := page.UsersVM{Tenant: u.TenantID, Self: u.ID, New: page.NewUserForm{Role: string(auth.PM)}, LinkValid: inWords(s.auth.LinkTTL())}
	for _, a := range accs {
		since := a.CreatedAt
		if a.DeactivatedAt != nil {
			since = *a.DeactivatedAt
		}
		vm.Users = append(vm.Users, page.UserRow{ID: a.ID, Name: a.Name, Email: a.Email, Role: string(a.Role), Active: a.Active(),
			PasswordSet: a.PasswordSet, Since: since.UTC().Format("2006-01-02 15:04")})
	}
	return vm, nil
}

// renderUsers renders the users page with the outcome of an action: a refusal the domain
// explains (a 4xx with its message on the page), or what it did.
func (s *Server) renderUsers(c echo.Context, actionErr error, fill func(*page.UsersVM)) error {
	status := http.StatusOK
	msg := ""
	if actionErr != nil {
		he := classify(actionErr, false)
		if he.status >= 500 || he.status == http.StatusNotFound {
			return actionErr
		}
		status, msg = he.status, he.msg
	}
	vm, err := s.usersVM(c)
	if err != nil {
		return err
	}
	vm.Error = msg
	if fill != nil {
		fill(&vm)
	}
	return render(c, status, page.UsersPage(s.metaActive(c, "Users", "users"), vm))
}

// metaActive is meta with the top bar's active key.
func (s *Server) metaActive(c echo.Context, title, active string) (m layout.Meta) {
	m = s.meta(c, title)
	m.Active = active
	return m
}

// inWords says a duration in hours, or minutes under one.
func inWords(d time.Duration) string {
	if d < time.Hour {
		return page.Plural(int64(d/time.Minute), "minute", "minutes")
	}
	return page.Plural(int64(d/time.Hour), "hour", "hours")
}

func (s *Server) usersPage(c echo.Context) error { return s.renderUsers(c, nil, nil) }

// linkURL is the absolute address of a password link, on the host the admin's browser used.
func (s *Server) linkURL(c echo.Context, secret string) string {
	scheme := c.Scheme()
	host := c.Request().Host
	if fwd := strings.TrimSpace(strings.Split(c.Request().Header.Get("X-Forwarded-Host"), ",")[0]); s.cfg.TrustProxy && fwd != "" {
		host = fwd
	}
	return scheme + "://" + host + auth.SetPasswordPath(secret)
}

func (s *Server) userCreate(c echo.Context) error {
	u := currentUser(c)
	form := page.NewUserForm{Name: strings.TrimSpace(c.FormValue("name")), Email: strings.TrimSpace(c.FormValue("email")), Role: c.FormValue("role")}
	acc, secret, err := s.auth.CreateAccount(c.Request().Context(), u.ID, auth.NewAccount{TenantID: u.TenantID, Email: form.Email,
		Name: form.Name, Role: auth.Role(form.Role)})
	return s.renderUsers(c, err, func(vm *page.UsersVM) {
		if err != nil {
			vm.New = form
			return
		}
		vm.Notice = "Added " + acc.Name + " as " + string(acc.Role) + "."
		vm.Link, vm.LinkFor = s.linkURL(c, secret), acc.Name
	})
}

func (s *Server) userRole(c echo.Context) error {
	u := currentUser(c)
	acc, err := s.auth.SetRole(c.Request().Context(), u.ID, u.TenantID, c.Param("id"), auth.Role(c.FormValue("role")))
	return s.renderUsers(c, err, func(vm *page.UsersVM) {
		if err == nil {
			vm.Notice = acc.Name + " is now " + string(acc.Role) + "."
		}
	})
}

func (s *Server) userActive(active bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		u := currentUser(c)
		acc, err := s.auth.SetActive(c.Request().Context(), u.ID, u.TenantID, c.Param("id"), active)
		return s.renderUsers(c, err, func(vm *page.UsersVM) {
			switch {
			case err != nil:
			case active:
				vm.Notice = acc.Name + " is active again and can sign in."
			default:
				vm.Notice = acc.Name + " is deactivated: their sessions and API tokens stopped working."
			}
		})
	}
}

func (s *Server) userResetLink(c echo.Context) error {
	u := currentUser(c)
	ctx := c.Request().Context()
	acc, err := s.auth.Account(ctx, u.TenantID, c.Param("id"))
	if err != nil {
		return err
	}
	secret, err := s.auth.IssueResetLink(ctx, u.ID, u.TenantID, acc.ID)
	return s.renderUsers(c, err, func(vm *page.UsersVM) {
		if err == nil {
			vm.Notice = "A new link for " + acc.Name + " replaces any earlier one."
			vm.Link, vm.LinkFor = s.linkURL(c, secret), acc.Name
		}
	})
}

func (s *Server) accountVM(c echo.Context) page.AccountVM {
	u := currentUser(c)
	return page.AccountVM{Name: u.Name, Email: u.Email, Role: string(u.Role), Tenant: u.TenantID}
}

func (s *Server) accountPage(c echo.Context) error {
	return render(c, http.StatusOK, page.AccountPage(s.meta(c, "Your account"), s.accountVM(c)))
}

func (s *Server) accountPassword(c echo.Context) error {
	u := currentUser(c)
	vm := s.accountVM(c)
	err := s.auth.ChangePassword(c.Request().Context(), u.ID, c.FormValue("current"), c.FormValue("password"))
	status := http.StatusOK
	if err != nil {
		he := classify(err, false)
		if he.status >= 500 {
			return err
		}
		status, vm.Error = he.status, he.msg
	} else {
		// A new password ends the sessions signed in before it: this one signs in again.
		if err := s.auth.Login(c.Request().Context(), u); err != nil {
			return err
		}
		vm.Notice = "Your password is changed. Your other sessions have ended."
	}
	return render(c, status, page.AccountPage(s.meta(c, "Your account"), vm))
}

// linkVM is the page of a link: its form when usable, else why not (and the status to say it with).
func (s *Server) linkVM(c echo.Context, token string) (page.SetPasswordVM, int) {
	vm := page.SetPasswordVM{Token: token}
	acc, err := s.auth.PasswordLink(c.Request().Context(), token)
	if err != nil {
		he := classify(err, false)
		if token == "" {
			he = classify(auth.ErrLinkUnknown, false)
		}
		vm.Error = he.msg
		if he.status >= 500 {
			return vm, he.status
		}
		return vm, http.StatusGone
	}
	vm.Usable, vm.Name, vm.Email, vm.Reset = true, acc.Name, acc.Email, acc.PasswordSet
	return vm, http.StatusOK
}

func (s *Server) passwordLinkPage(c echo.Context) error {
	// The page holds a secret: no cache keeps it, and it tells no other site where it was.
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	vm, status := s.linkVM(c, c.QueryParam("token"))
	return render(c, status, page.SetPasswordPage(s.meta(c, "Set your password"), vm))
}

func (s *Server) passwordLinkSet(c echo.Context) error {
	c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
	token := c.FormValue("token")
	acc, err := s.auth.UsePasswordLink(c.Request().Context(), token, c.FormValue("password"))
	if err != nil {
		var fe *fault.Error
		if errors.As(err, &fe) && fe.Code == fault.CodeWeakPassword {
			vm, _ := s.linkVM(c, token)
			vm.Error = classify(err, false).msg
			return render(c, http.StatusBadRequest, page.SetPasswordPage(s.meta(c, "Set your password"), vm))
		}
		if errors.Is(err, graph.ErrNotFound) {
			err = auth.ErrLinkUnknown
		}
		he := classify(err, false)
		if he.status >= 500 {
			return err
		}
		return render(c, http.StatusGone, page.SetPasswordPage(s.meta(c, "Set your password"), page.SetPasswordVM{Error: he.msg}))
	}
	return render(c, http.StatusOK, page.Login(s.meta(c, "Sign in"), page.LoginVM{Email: acc.Email,
		Info: "Your password is set. Sign in with it.", Demo: s.demoLogins(c)}))
}

// routesUsersAPI is the users API for an admin's token: the same actions as the users page.
func (s *Server) routesUsersAPI(api *echo.Group) {
	admin := requireRole(auth.Admin)
	api.GET("/users", s.apiUsers, admin)
	api.POST("/users", s.apiUserCreate, admin, jsonBodies)
	api.GET("/users/:id", s.apiUser, admin)
	api.POST("/users/:id/role", s.apiUserRole, admin, jsonBodies)
	api.POST("/users/:id/deactivate", s.apiUserActive(false), admin)
	api.POST("/users/:id/reactivate", s.apiUserActive(true), admin)
	api.POST("/users/:id/reset-link", s.apiUserResetLink, admin)
}

type apiAccount struct {
	ID          string `json:"id"`
	Email       string `json:"email"`
	Name        string `json:"name"`
	Role        string `json:"role"`
	Active      bool   `json:"active"`
	PasswordSet bool   `json:"password_set"`
}

func apiAccountFrom(a auth.Account) apiAccount {
	return apiAccount{ID: a.ID, Email: a.Email, Name: a.Name, Role: string(a.Role), Active: a.Active(), PasswordSet: a.PasswordSet}
}

func (s *Server) apiUsers(c echo.Context) error {
	accs, err := s.auth.Accounts(c.Request().Context(), currentUser(c).TenantID)
	if err != nil {
		return err
	}
	out := make([]apiAccount, 0, len(accs))
	for _, a := range accs {
		out = append(out, apiAccountFrom(a))
	}
	return c.JSON(http.StatusOK, map[string]any{"users": out})
}

func (s *Server) apiUser(c echo.Context) error {
	a, err := s.auth.Account(c.Request().Context(), currentUser(c).TenantID, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, apiAccountFrom(a))
}

func (s *Server) apiUserCreate(c echo.Context) error {
	var req struct {
		Email string `json:"email"`
		Name  string `json:"name"`
		Role  string `json:"role"`
	}
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	u := currentUser(c)
	a, secret, err := s.auth.CreateAccount(c.Request().Context(), u.ID, auth.NewAccount{TenantID: u.TenantID, Email: req.Email, Name: req.Name, Role: auth.Role(req.Role)})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, map[string]any{"user": apiAccountFrom(a), "password_link": s.linkURL(c, secret)})
}

func (s *Server) apiUserRole(c echo.Context) error {
	var req struct {
		Role string `json:"role"`
	}
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	u := currentUser(c)
	a, err := s.auth.SetRole(c.Request().Context(), u.ID, u.TenantID, c.Param("id"), auth.Role(req.Role))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, apiAccountFrom(a))
}

func (s *Server) apiUserActive(active bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		u := currentUser(c)
		a, err := s.auth.SetActive(c.Request().Context(), u.ID, u.TenantID, c.Param("id"), active)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, apiAccountFrom(a))
	}
}

func (s *Server) apiUserResetLink(c echo.Context) error {
	u := currentUser(c)
	secret, err := s.auth.IssueResetLink(c.Request().Context(), u.ID, u.TenantID, c.Param("id"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]string{"password_link": s.linkURL(c, secret)})
}
