package dataagent

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"weft/internal/workflow"
)

// SQLCode is a SQL text as a code block, highlighted by PostgreSQL's own
// scanner (pg_query's Scan, the lexer of the server's grammar): keywords,
// strings, numbers, comments, function names and operators are marked. SQL
// the scanner refuses is shown plain.
func SQLCode(sql, caption string) workflow.Code {
	return workflow.Code{Language: "sql", Text: sql, Caption: caption, Marks: sqlMarks(sql)}
}

// sqlMarks are the token kinds of sql as marks (byte offsets).
func sqlMarks(sql string) []workflow.Mark {
	res, err := pg_query.Scan(sql)
	if err != nil {
		return nil
	}
	toks := res.GetTokens()
	var marks []workflow.Mark
	is := func(i int, tok pg_query.Token) bool { return i >= 0 && i < len(toks) && toks[i].Token == tok }
	for i, t := range toks {
		class := tokenClass(t)
		switch {
		case t.Token == pg_query.Token_IDENT && is(i+1, pg_query.Token_ASCII_40):
			class = workflow.CodeFunction
		case class == workflow.CodeKeyword && t.KeywordKind != pg_query.KeywordKind_RESERVED_KEYWORD &&
			(is(i-1, pg_query.Token_ASCII_46) || is(i+1, pg_query.Token_ASCII_46)):
			class = "" // a non-reserved keyword in a qualified name is a name (regions.name)
		}
		if class != "" {
			marks = append(marks, workflow.Mark{Start: int(t.Start), End: int(t.End), Class: class})
		}
	}
	return marks
}

func tokenClass(t *pg_query.ScanToken) string {
	switch t.Token {
	case pg_query.Token_SCONST, pg_query.Token_USCONST, pg_query.Token_BCONST, pg_query.Token_XCONST:
		return workflow.CodeString
	case pg_query.Token_ICONST, pg_query.Token_FCONST:
		return workflow.CodeNumber
	case pg_query.Token_SQL_COMMENT, pg_query.Token_C_COMMENT:
		return workflow.CodeComment
	case pg_query.Token_Op, pg_query.Token_TYPECAST, pg_query.Token_LESS_EQUALS, pg_query.Token_GREATER_EQUALS,
		pg_query.Token_NOT_EQUALS, pg_query.Token_ASCII_60, pg_query.Token_ASCII_61, pg_query.Token_ASCII_62,
		pg_query.Token_ASCII_42, pg_query.Token_ASCII_43, pg_query.Token_ASCII_45, pg_query.Token_ASCII_47, pg_query.Token_ASCII_37:
		return workflow.CodeOperator
	}
	if t.KeywordKind != pg_query.KeywordKind_NO_KEYWORD {
		return workflow.CodeKeyword
	}
	return ""
}
