package main

import (
	"errors"
	"testing"
)

func TestSoftLimit(t *testing.T) {
	for _, c := range []struct {
		cgroup uint64
		err    error
		want   int64
	}{
		{0, errors.New("no cgroup"), 4 << 30},
		{1 << 40, nil, 4 << 30},
		{1 << 30, nil, 966367638},
		{512 << 20, nil, 483183819},
		{1 << 30, errors.New("unreadable"), 4 << 30},
	} {
		if got := softLimit(c.cgroup, c.err); got != c.want {
			t.Errorf("softLimit(%d, %v) = %d, want %d", c.cgroup, c.err, got, c.want)
		}
	}
}
