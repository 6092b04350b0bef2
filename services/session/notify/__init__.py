"""Notifications on a person's devices for what Violet tells while none of them is connected:
where each device takes them (`subscriptions`), which devices follow the conversation now
(`presence`), the messages waiting to be notified (`outbox`), their words (`wording`), the
sender (`notifier`) and the gRPC face the gateway calls (`service`)."""
