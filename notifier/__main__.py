from notifier.cli import main

raise SystemExit(main())
