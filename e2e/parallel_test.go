package e2e

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// The scenarios run side by side (see parallel in harness_test.go): a
// test's first Editor makes it parallel, but a table test's Editors are
// its subtests', so the table itself would run alone, and its subtests
// only beside each other. Every test with subtests says which it is as its
// first statement: parallel(t), or serial(t) with the reason. And no test
// changes what the tests running beside it share: the process's
// environment and working directory (editorEnv, editorUnsetenv give an
// Editor its own).
func TestScenariosDeclareHowTheyRun(t *testing.T) {
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || fd.Body == nil {
				continue
			}
			for _, bad := range processChanges(fd.Body) {
				if fd.Name.Name != "startWireCheck" { // before any test runs
					t.Errorf("%s: %s calls %s: use editorEnv / editorUnsetenv (an Editor's own environment)", fset.Position(fd.Pos()), fd.Name.Name, bad)
				}
			}
			if !strings.HasPrefix(fd.Name.Name, "Test") || !hasSubtests(fd.Body) {
				continue
			}
			if !declaresHowItRuns(fd.Body) {
				t.Errorf("%s: %s has subtests: its first statement is parallel(t), or serial(t) with the reason", fset.Position(fd.Pos()), fd.Name.Name)
			}
		}
	}
}

// hasSubtests reports whether body calls t.Run (or forServers, forProfiles).
func hasSubtests(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return !found
		}
		switch fn := c.Fun.(type) {
		case *ast.SelectorExpr:
			if id, ok := fn.X.(*ast.Ident); ok && id.Name == "t" && fn.Sel.Name == "Run" {
				found = true
			}
		case *ast.Ident:
			if fn.Name == "forServers" || fn.Name == "forProfiles" {
				found = true
			}
		}
		return !found
	})
	return found
}

// declaresHowItRuns reports whether body's first statement is parallel(t)
// or serial(t).
func declaresHowItRuns(body *ast.BlockStmt) bool {
	if len(body.List) == 0 {
		return false
	}
	es, ok := body.List[0].(*ast.ExprStmt)
	if !ok {
		return false
	}
	c, ok := es.X.(*ast.CallExpr)
	if !ok {
		return false
	}
	id, ok := c.Fun.(*ast.Ident)
	return ok && (id.Name == "parallel" || id.Name == "serial")
}

// processChanges lists the calls in body that change the process's
// environment or working directory.
func processChanges(body *ast.BlockStmt) []string {
	var out []string
	ast.Inspect(body, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if sel, ok := c.Fun.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "os" {
				switch sel.Sel.Name {
				case "Setenv", "Unsetenv", "Clearenv", "Chdir":
					out = append(out, "os."+sel.Sel.Name)
				}
			}
		}
		return true
	})
	return out
}
