module rdma-webhook/tests/soak/client

go 1.26
