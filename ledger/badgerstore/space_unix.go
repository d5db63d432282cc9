//go:build unix

package badgerstore

import "syscall"

// diskFree returns the bytes available to this process on dir's file system.
func diskFree(dir string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return uint64(st.Bavail) * uint64(st.Bsize), nil
}
