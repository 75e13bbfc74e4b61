// Package layout holds the page frame every console page renders inside.
// Like all of web/, it imports nothing from internal/, db/, pgx or echo.
package layout

// Meta is what the frame needs from a request.
type Meta struct {
	Title  string
	Active string // nav key: dashboard, runs, reviews, audit, dlq, users
	User   *User  // nil on the login page
	CSRF   string
	// LLM names the scoring provider; Offline marks the offline provider,
	// which the frame labels everywhere.
	LLM     string
	Offline bool
}

// User is the signed-in user as the frame shows them.
type User struct {
	Name   string
	Role   string
	Tenant string
}

// NavItem is one link of the top bar.
type NavItem struct {
	Key, Label, Href string
}

// Nav lists the links a role sees.
func (m Meta) Nav() []NavItem {
	if m.User == nil {
		return nil
	}
	var out []NavItem
	switch m.User.Role {
	case "pm":
		out = append(out, NavItem{"dashboard", "Dashboard", "/dashboard"}, NavItem{"runs", "Runs", "/runs"})
	case "reviewer":
		out = append(out, NavItem{"reviews", "Review inbox", "/reviews"})
	case "admin":
		out = append(out, NavItem{"dashboard", "Dashboard", "/dashboard"}, NavItem{"runs", "Runs", "/runs"}, NavItem{"reviews", "Review inbox", "/reviews"},
			NavItem{"dlq", "Dead letters", "/dlq"}, NavItem{"audit", "Audit log", "/audit"}, NavItem{"users", "Users", "/admin/users"})
	}
	return out
}

// CSRFHeader is the hx-headers value that sends the CSRF token with every
// htmx request.
func (m Meta) CSRFHeader() string {
	return `{"X-CSRF-Token": "` + m.CSRF + `"}`
}
