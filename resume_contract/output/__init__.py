"""What people and CI systems read: terminal-safe text (`terminal`), a plan as text (`plan_text`) and JUnit XML
(`junit`). Pure formatting over the core's types."""
