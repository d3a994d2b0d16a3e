// A sketch (not compiled in CI) of an Unreal client for star-harness protocol v1: one
// IWebSocket, frames parsed into the USTRUCTs of StarHarnessFrames.h and broadcast as one
// Blueprint-assignable event per frame type. IWebSocket raises its events on the game thread.
#pragma once

#include "CoreMinimal.h"
#include "Components/ActorComponent.h"
#include "StarHarnessFrames.h"
#include "StarHarnessClientComponent.generated.h"

class IWebSocket;
class FJsonObject;

DECLARE_DYNAMIC_MULTICAST_DELEGATE_OneParam(FOnStarHarnessWelcome, const FStarHarnessWelcome&, Frame);
DECLARE_DYNAMIC_MULTICAST_DELEGATE_OneParam(FOnStarHarnessEncounterOpened, const FStarHarnessEncounterOpened&, Frame);
DECLARE_DYNAMIC_MULTICAST_DELEGATE_OneParam(FOnStarHarnessSayDelta, const FStarHarnessSayDelta&, Frame);
DECLARE_DYNAMIC_MULTICAST_DELEGATE_OneParam(FOnStarHarnessSayEnd, const FStarHarnessSayEnd&, Frame);
DECLARE_DYNAMIC_MULTICAST_DELEGATE_OneParam(FOnStarHarnessOptions, const FStarHarnessOptions&, Frame);
DECLARE_DYNAMIC_MULTICAST_DELEGATE_OneParam(FOnStarHarnessAction, const FStarHarnessAction&, Frame);
DECLARE_DYNAMIC_MULTICAST_DELEGATE_OneParam(FOnStarHarnessEncounterIdle, const FStarHarnessEncounterIdle&, Frame);
DECLARE_DYNAMIC_MULTICAST_DELEGATE_OneParam(FOnStarHarnessScenePlayers, const FStarHarnessScenePlayers&, Frame);
DECLARE_DYNAMIC_MULTICAST_DELEGATE_OneParam(FOnStarHarnessError, const FStarHarnessError&, Frame);
DECLARE_DYNAMIC_MULTICAST_DELEGATE_OneParam(FOnStarHarnessWorldEvent, const FStarHarnessWorldEvent&, Frame);
DECLARE_DYNAMIC_MULTICAST_DELEGATE_OneParam(FOnStarHarnessHud, const FStarHarnessHud&, Frame);
DECLARE_DYNAMIC_MULTICAST_DELEGATE_TwoParams(FOnStarHarnessDisconnected, int32, StatusCode, const FString&, Reason);

UCLASS(ClassGroup = (StarHarness), meta = (BlueprintSpawnableComponent))
class STARHARNESSCLIENT_API UStarHarnessClientComponent : public UActorComponent
{
	GENERATED_BODY()

public:
	UPROPERTY(EditAnywhere, BlueprintReadWrite, Category = "StarHarness")
	FString Url = TEXT("ws://127.0.0.1:3099/gh");

	UPROPERTY(EditAnywhere, BlueprintReadWrite, Category = "StarHarness")
	FString PlayerId = TEXT("player-1");

	/** Sent as "Authorization: Bearer <token>" when the server needs one. */
	UPROPERTY(EditAnywhere, BlueprintReadWrite, Category = "StarHarness")
	FString Token;

	UPROPERTY(EditAnywhere, Category = "StarHarness")
	bool bConnectOnBeginPlay = true;

	UPROPERTY(BlueprintAssignable) FOnStarHarnessWelcome OnWelcome;
	UPROPERTY(BlueprintAssignable) FOnStarHarnessEncounterOpened OnEncounterOpened;
	UPROPERTY(BlueprintAssignable) FOnStarHarnessSayDelta OnSayDelta;
	UPROPERTY(BlueprintAssignable) FOnStarHarnessSayEnd OnSayEnd;
	UPROPERTY(BlueprintAssignable) FOnStarHarnessOptions OnOptions;
	UPROPERTY(BlueprintAssignable) FOnStarHarnessAction OnAction;
	UPROPERTY(BlueprintAssignable) FOnStarHarnessEncounterIdle OnEncounterIdle;
	/** Who is in a shared scene now (a player joined or left). */
	UPROPERTY(BlueprintAssignable) FOnStarHarnessScenePlayers OnScenePlayers;
	UPROPERTY(BlueprintAssignable) FOnStarHarnessError OnError;
	UPROPERTY(BlueprintAssignable) FOnStarHarnessWorldEvent OnWorldEvent;
	UPROPERTY(BlueprintAssignable) FOnStarHarnessHud OnHud;
	/** Encounters do not survive a reconnect: close the dialogue UI. */
	UPROPERTY(BlueprintAssignable) FOnStarHarnessDisconnected OnDisconnected;

	UFUNCTION(BlueprintCallable, Category = "StarHarness") void Connect();
	UFUNCTION(BlueprintCallable, Category = "StarHarness") void Disconnect();
	/** Walk up to an NPC; returns the encounter id to pass to Say/SayOption/CloseEncounter. */
	UFUNCTION(BlueprintCallable, Category = "StarHarness") FString OpenEncounter(const FString& NpcId);
	/** Free text; wait for OnEncounterIdle first, or the server answers error "busy". */
	UFUNCTION(BlueprintCallable, Category = "StarHarness") void Say(const FString& EncounterId, const FString& Text);
	UFUNCTION(BlueprintCallable, Category = "StarHarness") void SayOption(const FString& EncounterId, const FString& OptionId);
	/** Walk up to several NPCs at once (1 to 4 ids, in one place): a scene whose frames name
	 *  their speaker in SpeakerId; NpcIds[0] holds the floor first. On a server of Revision 3 or
	 *  more the scene is shared ("join"): other players at the place who open one with the same
	 *  NPCs are in it, and their lines carry SpeakerName. Returns the encounter id. */
	UFUNCTION(BlueprintCallable, Category = "StarHarness") FString OpenScene(const TArray<FString>& NpcIds);
	/** In a scene: free text to one of its NPCs (the others hear it too). */
	UFUNCTION(BlueprintCallable, Category = "StarHarness") void SayTo(const FString& EncounterId, const FString& NpcId, const FString& Text);
	UFUNCTION(BlueprintCallable, Category = "StarHarness") void CloseEncounter(const FString& EncounterId);
	UFUNCTION(BlueprintCallable, Category = "StarHarness") void AdvanceWorld(int32 Days);

	/** The protocol revision whose scenes several players share. */
	static constexpr int32 SharedScenesRevision = 3;
	/** The server's protocol revision, from its welcome (1 until then). */
	UPROPERTY(BlueprintReadOnly, Category = "StarHarness") int32 Revision = 1;

protected:
	virtual void BeginPlay() override;
	virtual void EndPlay(const EEndPlayReason::Type Reason) override;

private:
	void HandleConnected();
	void HandleConnectionError(const FString& Error);
	void HandleClosed(int32 StatusCode, const FString& Reason, bool bWasClean);
	void HandleMessage(const FString& Message);
	void ScheduleReconnect();
	void SendObject(const TSharedRef<FJsonObject>& Frame);

	TSharedPtr<IWebSocket> Socket;
	FTimerHandle ReconnectTimer;
	float BackoffSeconds = 0.5f;
	int32 EncountersOpened = 0;
	bool bStopping = false;
};
