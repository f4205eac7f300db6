package main

import (
	"strings"
	"testing"
)

// TestConfigShards checks the sharding settings: both or neither of KIOKU_SHARD_ID and
// KIOKU_SHARD_COUNT, the id below the count, auto alone; each bad combination fails with
// one error naming the setting to fix.
func TestConfigShards(t *testing.T) {
	load := func(env map[string]string) (Config, error) {
		return LoadConfig(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	}
	for _, tc := range []struct {
		env        map[string]string
		id, count  int
		auto       bool
		errMention string
	}{
		{env: map[string]string{}, id: 0, count: 1},
		{env: map[string]string{"KIOKU_SHARD_ID": "1", "KIOKU_SHARD_COUNT": "2"}, id: 1, count: 2},
		{env: map[string]string{"KIOKU_SHARD_ID": "0", "KIOKU_SHARD_COUNT": "1"}, id: 0, count: 1},
		{env: map[string]string{"KIOKU_SHARDS": "AUTO"}, id: 0, count: 1, auto: true},
		{env: map[string]string{"KIOKU_SHARDS": ""}, id: 0, count: 1},
		{env: map[string]string{"KIOKU_SHARD_ID": "1"}, errMention: "KIOKU_SHARD_ID"},
		{env: map[string]string{"KIOKU_SHARD_COUNT": "2"}, errMention: "KIOKU_SHARD_COUNT"},
		{env: map[string]string{"KIOKU_SHARD_ID": "2", "KIOKU_SHARD_COUNT": "2"}, errMention: "KIOKU_SHARD_ID"},
		{env: map[string]string{"KIOKU_SHARD_ID": "-1", "KIOKU_SHARD_COUNT": "2"}, errMention: "KIOKU_SHARD_ID"},
		{env: map[string]string{"KIOKU_SHARD_ID": "0", "KIOKU_SHARD_COUNT": "0"}, errMention: "KIOKU_SHARD_COUNT"},
		{env: map[string]string{"KIOKU_SHARD_ID": "x", "KIOKU_SHARD_COUNT": "2"}, errMention: "KIOKU_SHARD_ID"},
		{env: map[string]string{"KIOKU_SHARDS": "all"}, errMention: "KIOKU_SHARDS"},
		{env: map[string]string{"KIOKU_SHARDS": "auto", "KIOKU_SHARD_ID": "0", "KIOKU_SHARD_COUNT": "2"}, errMention: "KIOKU_SHARDS"},
	} {
		cfg, err := load(tc.env)
		if tc.errMention != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errMention) {
				t.Errorf("%v: err = %v, want an error naming %s", tc.env, err, tc.errMention)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", tc.env, err)
			continue
		}
		if cfg.ShardID != tc.id || cfg.ShardCount != tc.count || cfg.ShardsAuto != tc.auto {
			t.Errorf("%v: shard %d of %d auto %v, want %d of %d auto %v", tc.env, cfg.ShardID, cfg.ShardCount, cfg.ShardsAuto, tc.id, tc.count, tc.auto)
		}
	}
}
