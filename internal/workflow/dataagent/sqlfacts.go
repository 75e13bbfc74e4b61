package dataagent

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// ErrRefused marks SQL refused before it runs: not exactly one read-only
// SELECT, or a function that could leave the analyst's role.
var ErrRefused = errors.New("query refused")

// RefusedError says why a query was refused.
type RefusedError struct{ Reason string }

func (e *RefusedError) Error() string { return "query refused: " + e.Reason }

// Is makes errors.Is(err, ErrRefused) true.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

func refuse(format string, args ...any) error {
	return &RefusedError{Reason: fmt.Sprintf(format, args...)}
}

// deniedFunctions may not appear in an analysis query: set_config can switch
// the role back to the session's inside the transaction, the XML query
// functions run SQL text of their own, and the rest reach outside the
// analysis schema or the server.
var deniedFunctions = map[string]bool{"set_config": true, "query_to_xml": true, "query_to_xmlschema": true,
	"query_to_xml_and_xmlschema": true, "cursor_to_xml": true, "cursor_to_xmlschema": true, "table_to_xml": true,
	"table_to_xmlschema": true, "table_to_xml_and_xmlschema": true, "schema_to_xml": true, "database_to_xml": true,
	"dblink": true, "dblink_exec": true, "pg_read_file": true, "pg_read_binary_file": true, "pg_ls_dir": true,
	"pg_stat_file": true, "lo_import": true, "lo_export": true, "pg_terminate_backend": true, "pg_cancel_backend": true,
	"pg_reload_conf": true, "pg_notify": true, "pg_advisory_lock": true, "pg_advisory_xact_lock": true, "pg_sleep_until": true}

// sqlFacts is what a query reads and computes, from its parse tree.
type sqlFacts struct {
	tables  []tableRef
	ctes    map[string]bool
	aliases map[string]string // alias (or table name) → table name; "" for a subquery or CTE
	outputs map[string]bool   // every output column name (SELECT … AS x), at any level
	columns []colRef
	funcs   []funcRef
	preds   []pred
	grouped bool // the top-level SELECT has a GROUP BY
}

type tableRef struct{ schema, name, alias string }

type colRef struct{ qualifier, name string }

type funcRef struct {
	name     string
	distinct bool
}

// pred is a comparison of a column with constants: =, IN, >=, >, <, <=, BETWEEN.
type pred struct {
	col    colRef
	op     string
	values []string
}

// CheckSelect parses sql with PostgreSQL's own grammar (pg_query) and
// refuses anything but one read-only SELECT: several statements, any other
// statement (INSERT, DDL, COPY, SET ROLE…), SELECT … INTO, FOR UPDATE, a
// data-modifying WITH, and the functions of deniedFunctions. The error is
// a *RefusedError.
func CheckSelect(sql string) error {
	_, err := analyzeSQL(sql)
	return err
}

func analyzeSQL(sql string) (*sqlFacts, error) {
	tree, err := pg.Parse(sql)
	if err != nil {
		return nil, refuse("not valid PostgreSQL: %v", err)
	}
	switch n := len(tree.GetStmts()); {
	case n == 0:
		return nil, refuse("there is no statement")
	case n > 1:
		return nil, refuse("%d statements; one SELECT is allowed", n)
	}
	top := tree.GetStmts()[0].GetStmt()
	sel := top.GetSelectStmt()
	if sel == nil {
		return nil, refuse("a %s statement; only SELECT is allowed", statementName(top))
	}
	f := &sqlFacts{ctes: map[string]bool{}, aliases: map[string]string{}, outputs: map[string]bool{}}
	f.grouped = len(sel.GetGroupClause()) > 0
	var bad error
	walk(sel.ProtoReflect(), func(m proto.Message) {
		if bad == nil {
			bad = f.visit(m)
		}
	})
	if bad != nil {
		return nil, bad
	}
	return f, nil
}

// visit records one node of the tree, or refuses it.
func (f *sqlFacts) visit(m proto.Message) error {
	switch n := m.(type) {
	case *pg.SelectStmt:
		if n.GetIntoClause() != nil {
			return refuse("SELECT … INTO creates a table; only reading is allowed")
		}
		if len(n.GetLockingClause()) > 0 {
			return refuse("FOR UPDATE/SHARE locks rows; only reading is allowed")
		}
	case *pg.CommonTableExpr:
		f.ctes[n.GetCtename()] = true
		f.aliases[n.GetCtename()] = ""
		if q := n.GetCtequery(); q.GetSelectStmt() == nil {
			return refuse("the WITH query %q is a %s; only SELECT is allowed", n.GetCtename(), statementName(q))
		}
	case *pg.RangeVar:
		t := tableRef{schema: n.GetSchemaname(), name: n.GetRelname(), alias: n.GetAlias().GetAliasname()}
		f.tables = append(f.tables, t)
		f.aliases[t.name] = t.name
		if t.alias != "" {
			f.aliases[t.alias] = t.name
		}
	case *pg.RangeSubselect:
		if a := n.GetAlias().GetAliasname(); a != "" {
			f.aliases[a] = ""
		}
	case *pg.ResTarget:
		if n.GetName() != "" {
			f.outputs[n.GetName()] = true
		}
	case *pg.ColumnRef:
		if c, ok := columnOf(n); ok {
			f.columns = append(f.columns, c)
		}
	case *pg.FuncCall:
		name := lastName(n.GetFuncname())
		if deniedFunctions[name] {
			return refuse("the function %s is not allowed in an analysis query", name)
		}
		f.funcs = append(f.funcs, funcRef{name: name, distinct: n.GetAggDistinct()})
	case *pg.A_Expr:
		if p, ok := predOf(n); ok {
			f.preds = append(f.preds, p)
		}
	}
	return nil
}

// walk calls visit on every message of the tree below m, m included.
func walk(m protoreflect.Message, visit func(proto.Message)) {
	visit(m.Interface())
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				walk(l.Get(i).Message(), visit)
			}
		case fd.Message() != nil && !fd.IsMap():
			walk(v.Message(), visit)
		}
		return true
	})
}

// statementName names a statement node for messages: "InsertStmt" → "INSERT".
func statementName(n *pg.Node) string {
	if n == nil || n.GetNode() == nil {
		return "empty"
	}
	name := string(n.ProtoReflect().WhichOneof(n.ProtoReflect().Descriptor().Oneofs().ByName("node")).Name())
	name = strings.TrimSuffix(name, "_stmt")
	return strings.ToUpper(strings.ReplaceAll(name, "_", " "))
}

func lastName(ns []*pg.Node) string {
	if len(ns) == 0 {
		return ""
	}
	return strings.ToLower(ns[len(ns)-1].GetString_().GetSval())
}

func columnOf(n *pg.ColumnRef) (colRef, bool) {
	var parts []string
	for _, f := range n.GetFields() {
		if f.GetAStar() != nil {
			return colRef{}, false
		}
		parts = append(parts, f.GetString_().GetSval())
	}
	switch len(parts) {
	case 1:
		return colRef{name: parts[0]}, true
	case 0:
		return colRef{}, false
	}
	return colRef{qualifier: parts[len(parts)-2], name: parts[len(parts)-1]}, true
}

// predOf reads a comparison of a column with constants.
func predOf(n *pg.A_Expr) (pred, bool) {
	c := n.GetLexpr().GetColumnRef()
	if c == nil {
		return pred{}, false
	}
	col, ok := columnOf(c)
	if !ok {
		return pred{}, false
	}
	p := pred{col: col}
	switch n.GetKind() {
	case pg.A_Expr_Kind_AEXPR_OP:
		p.op = lastName(n.GetName())
		v, ok := constant(n.GetRexpr())
		if !ok {
			return pred{}, false
		}
		p.values = []string{v}
	case pg.A_Expr_Kind_AEXPR_IN, pg.A_Expr_Kind_AEXPR_BETWEEN:
		p.op = map[pg.A_Expr_Kind]string{pg.A_Expr_Kind_AEXPR_IN: "in", pg.A_Expr_Kind_AEXPR_BETWEEN: "between"}[n.GetKind()]
		if lastName(n.GetName()) == "<>" {
			return pred{}, false // NOT IN
		}
		for _, item := range n.GetRexpr().GetList().GetItems() {
			v, ok := constant(item)
			if !ok {
				return pred{}, false
			}
			p.values = append(p.values, v)
		}
	default:
		return pred{}, false
	}
	return p, true
}

// constant reads a literal (through casts: DATE '2025-07-01', '…'::date).
func constant(n *pg.Node) (string, bool) {
	if tc := n.GetTypeCast(); tc != nil {
		return constant(tc.GetArg())
	}
	c := n.GetAConst()
	if c == nil || c.GetIsnull() {
		return "", false
	}
	switch {
	case c.GetSval() != nil:
		return c.GetSval().GetSval(), true
	case c.GetIval() != nil:
		return strconv.Itoa(int(c.GetIval().GetIval())), true
	case c.GetFval() != nil:
		return c.GetFval().GetFval(), true
	case c.GetBoolval() != nil:
		return strconv.FormatBool(c.GetBoolval().GetBoolval()), true
	}
	return "", false
}
