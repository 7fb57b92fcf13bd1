module github.com/zklock/zklock

go 1.26

require (
	github.com/go-zookeeper/zk v1.0.4 // indirect
	github.com/stretchr/testify v1.11.1 // indirect
	go.uber.org/goleak v1.3.0 // indirect
)
