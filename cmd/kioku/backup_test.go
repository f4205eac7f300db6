package main

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestBackupCLI(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"KIOKU_DB": filepath.Join(dir, "kioku.db")}
	if code, _, errOut := runApp(t, env, "", "memories", "add", "Tea at four", "--guild", "g1"); code != 0 {
		t.Fatalf("add: exit %d, %s", code, errOut)
	}
	backup := filepath.Join(dir, "backup.db")
	if code, out, errOut := runApp(t, env, "", "backup", backup); code != 0 || !strings.Contains(out, backup) {
		t.Fatalf("backup: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	restored := map[string]string{"KIOKU_DB": backup}
	if code, out, errOut := runApp(t, restored, "", "memories", "list", "--guild", "g1"); code != 0 || !strings.Contains(out, "Tea at four") {
		t.Fatalf("list on the backup: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, _, errOut := runApp(t, env, "", "backup", backup)
	if code == 0 || !strings.Contains(errOut, "already exists") {
		t.Fatalf("backup over an existing file: exit %d, stderr %q", code, errOut)
	}
	if code, _, _ := runApp(t, env, "", "backup"); code != 2 {
		t.Fatalf("backup without PATH: exit %d, want 2", code)
	}
}
