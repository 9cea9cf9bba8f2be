"""What the Kubernetes controllers would create from workloads and claim templates, as pure functions."""
