"""Storage: tables, engines and transactions, migrations, standard names."""
