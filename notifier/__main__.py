from notifier.cli.parser import main

raise SystemExit(main())
