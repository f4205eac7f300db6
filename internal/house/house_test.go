// Package house_test keeps the production code the size a reader can hold:
// no file over 600 lines and no type over 25 methods. Long functions are
// reported in the test log so they are seen, not failed.
package house_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const (
	maxFileLines   = 600
	maxTypeMethods = 25
	longFuncLines  = 80
	moduleRootMark = "go.mod"
	testkitDir     = "internal/testkit"
	storeLtmDir    = "ltm"
)

// oversizeFiles lists the store files over maxFileLines today, with their
// line counts when the limit was set. The two stores are being folded into
// one; this list only shrinks: remove an entry once its file is back under
// the limit, and never raise a count.
var oversizeFiles = map[string]int{}

// oversizeTypes lists the store types over maxTypeMethods today, keyed by
// package directory and type name, with their method counts when the limit
// was set. Like oversizeFiles, this list only shrinks.
var oversizeTypes = map[string]int{}

// sourceFile is one parsed production Go file.
type sourceFile struct {
	rel  string // slash-separated path from the module root
	dir  string // slash-separated package directory from the module root
	file *ast.File
	fset *token.FileSet
}

func TestFilesStayShort(t *testing.T) {
	files := productionFiles(t)
	for _, f := range files {
		lines := f.fset.File(f.file.Pos()).LineCount()
		allowed, listed := oversizeFiles[f.rel]
		switch {
		case listed && lines > allowed:
			t.Errorf("%s has %d lines, more than the %d it had when the limit was set; split it by responsibility", f.rel, lines, allowed)
		case !listed && lines > maxFileLines:
			t.Errorf("%s has %d lines (limit %d); split it by responsibility", f.rel, lines, maxFileLines)
		}
	}
	assertAllowlistCurrent(t, "file", oversizeFiles, func(name string) (int, bool) {
		for _, f := range files {
			if f.rel == name {
				return f.fset.File(f.file.Pos()).LineCount(), true
			}
		}
		return 0, false
	}, maxFileLines)
}

func TestTypesStaySmall(t *testing.T) {
	counts := methodCounts(productionFiles(t))
	for name, n := range counts {
		allowed, listed := oversizeTypes[name]
		switch {
		case listed && n > allowed:
			t.Errorf("type %s has %d methods, more than the %d it had when the limit was set; split it by responsibility", name, n, allowed)
		case !listed && n > maxTypeMethods:
			t.Errorf("type %s has %d methods (limit %d); split it by responsibility", name, n, maxTypeMethods)
		}
	}
	assertAllowlistCurrent(t, "type", oversizeTypes, func(name string) (int, bool) {
		n, ok := counts[name]
		return n, ok
	}, maxTypeMethods)
}

// TestLongFunctions logs functions over longFuncLines so a reader sees where a
// break would help; length alone is not a failure (data tables are long).
func TestLongFunctions(t *testing.T) {
	type long struct {
		where string
		lines int
	}
	var found []long
	for _, f := range productionFiles(t) {
		for _, decl := range f.file.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			start := f.fset.Position(fn.Pos()).Line
			lines := f.fset.Position(fn.End()).Line - start + 1
			if lines > longFuncLines {
				found = append(found, long{where: f.rel + ":" + strconv.Itoa(start) + " " + funcName(fn), lines: lines})
			}
		}
	}
	sort.Slice(found, func(i, j int) bool { return found[i].lines > found[j].lines })
	for _, l := range found {
		t.Logf("%4d lines  %s", l.lines, l.where)
	}
}

// assertAllowlistCurrent fails when an allowlist entry names something that no
// longer exists or is back under the limit, so the list shrinks as code does.
func assertAllowlistCurrent(t *testing.T, kind string, list map[string]int, current func(string) (int, bool), limit int) {
	t.Helper()
	for name := range list {
		n, ok := current(name)
		switch {
		case !ok:
			t.Errorf("allowlisted %s %s no longer exists; remove it from the list", kind, name)
		case n <= limit:
			t.Errorf("allowlisted %s %s is within the limit now (%d); remove it from the list", kind, name, n)
		}
	}
	for name := range list {
		if !inStores(strings.SplitN(name, ".", 2)[0]) {
			t.Errorf("allowlisted %s %s is outside ltm/; only the store may be over the limit", kind, name)
		}
	}
}

// methodCounts counts the methods declared on each named type, unexported
// ones included, keyed "dir.Type".
func methodCounts(files []sourceFile) map[string]int {
	counts := map[string]int{}
	for _, f := range files {
		for _, decl := range f.file.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || len(fn.Recv.List) == 0 {
				continue
			}
			if name := receiverTypeName(fn.Recv.List[0].Type); name != "" {
				counts[f.dir+"."+name]++
			}
		}
	}
	return counts
}

func receiverTypeName(expr ast.Expr) string {
	switch e := expr.(type) {
	case *ast.StarExpr:
		return receiverTypeName(e.X)
	case *ast.IndexExpr: // generic receiver T[K]
		return receiverTypeName(e.X)
	case *ast.IndexListExpr: // generic receiver T[K, V]
		return receiverTypeName(e.X)
	case *ast.Ident:
		return e.Name
	}
	return ""
}

func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	return receiverTypeName(fn.Recv.List[0].Type) + "." + fn.Name.Name
}

// productionFiles parses every non-test Go file of the module, leaving out
// test helpers (internal/testkit), testdata and files built only by hand.
func productionFiles(t *testing.T) []sourceFile {
	t.Helper()
	root := moduleRoot(t)
	var files []sourceFile
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			base := d.Name()
			if rel != "." && (base == "testdata" || base == "vendor" || strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_")) {
				return filepath.SkipDir
			}
			if rel == testkitDir {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if ignoredByBuild(file) {
			return nil
		}
		files = append(files, sourceFile{rel: rel, dir: filepath.ToSlash(filepath.Dir(rel)), file: file, fset: fset})
		return nil
	})
	if err != nil {
		t.Fatalf("couldn't read the module's Go files: %v", err)
	}
	if len(files) == 0 {
		t.Fatalf("found no Go files under %s", root)
	}
	return files
}

// ignoredByBuild reports a file with a "//go:build ignore" constraint: a
// generator run by hand, not part of any package.
func ignoredByBuild(file *ast.File) bool {
	for _, group := range file.Comments {
		if group.Pos() >= file.Package {
			break
		}
		for _, c := range group.List {
			if strings.TrimSpace(c.Text) == "//go:build ignore" {
				return true
			}
		}
	}
	return false
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatalf("couldn't find the working directory: %v", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, moduleRootMark)); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("couldn't find %s above the working directory", moduleRootMark)
		}
		dir = parent
	}
}

func inStores(dir string) bool {
	return strings.SplitN(dir, "/", 2)[0] == storeLtmDir // the service and its engines
}
