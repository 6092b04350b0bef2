"""Reminders and work on a schedule: what the person asked for, when it is due in their zone,
and its firing, once per occurrence on any replica."""
