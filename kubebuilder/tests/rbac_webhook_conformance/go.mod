module local.invalid/rbacwebhook

go 1.26.0
