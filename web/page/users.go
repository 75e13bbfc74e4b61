package page

// The account pages (users.templ): the admin's users page, a user's own account page and
// the page a one-time password link opens. Handlers in internal/server/users.go fill them in.

// UsersVM is the admin's users page: the tenant's users and the form to add one.
type UsersVM struct {
	Tenant string
	Users  []UserRow
	Notice string // what the last action did
	Error  string // why the last action was refused
	// Link is a one-time password link just issued (shown once), for LinkFor; it works for
	// LinkValid ("24 hours").
	Link, LinkFor, LinkValid string
	New                      NewUserForm // the add form as last sent (kept when refused)
	Self                     string      // the signed-in admin's id
}

// UserRow is one user of the list.
type UserRow struct {
	ID, Name, Email, Role string
	Active, PasswordSet   bool
	Since                 string // when deactivated, or created
}

// NewUserForm is the add-a-user form's values.
type NewUserForm struct {
	Name, Email, Role string
}

// Roles are the roles a form offers.
var Roles = []string{"pm", "reviewer", "admin"}

// AccountVM is a user's own account page (change password).
type AccountVM struct {
	Name, Email, Role, Tenant string
	Notice, Error             string
}

// SetPasswordVM is the page of a one-time link: the form, or why the link cannot be used.
type SetPasswordVM struct {
	Token       string
	Name, Email string
	Reset       bool   // a reset (the user had a password) rather than a first one
	Error       string // the link cannot be used (no form), or the password was refused (form again)
	Usable      bool
}
