package containers

import (
	"context"
	"os"
	"strconv"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/zklock/zklock/internal/orphans"
)

// Labels on every container and network this package creates.
const (
	labelOwner      = "org.zklock.zktest.owner"      // pid of the test binary
	labelOwnerStart = "org.zklock.zktest.ownerstart" // its start time (/proc/<pid>/stat field 22)
	labelMember     = "org.zklock.zktest.member"     // 1-based member id (containers)
)

func ownerLabels() map[string]string {
	return map[string]string{labelOwner: strconv.Itoa(os.Getpid()), labelOwnerStart: orphans.ProcStart(os.Getpid())}
}

func ownerAlive(labels map[string]string) bool {
	pid, err := strconv.Atoi(labels[labelOwner])
	return err == nil && orphans.Alive(pid, labels[labelOwnerStart])
}

// Reap removes the containers and networks of this package whose test
// binary is gone (killed before its t.Cleanup ran) and returns how many
// containers it removed. Start calls it; errors are ignored (a container
// removed meanwhile by another binary is fine).
func Reap(ctx context.Context, p *testcontainers.DockerProvider) int {
	cli := p.Client()
	f := client.Filters{}.Add("label", labelOwner)
	n := 0
	if res, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f}); err == nil {
		for _, c := range res.Items {
			if ownerAlive(c.Labels) {
				continue
			}
			if _, err := cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err == nil {
				n++
			}
		}
	}
	if res, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: f}); err == nil {
		for _, nw := range res.Items {
			if !ownerAlive(nw.Labels) {
				_, _ = cli.NetworkRemove(ctx, nw.ID, client.NetworkRemoveOptions{})
			}
		}
	}
	return n
}
