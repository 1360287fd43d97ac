"""What each launch will meet: the verl, the device, the stack and the model it targets."""
