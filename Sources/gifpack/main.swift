print("gifpack")
